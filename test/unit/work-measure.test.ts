import { describe, expect, it } from 'vitest';
import { imageWork, parseSize, usageTokens, wavSeconds } from '../../src-router/serve';
import { wavFile } from '../support/node-harness';

describe('work measures', () => {
  it('reads audio seconds from a WAV header', () => {
    expect(wavSeconds(wavFile(2.5))).toBeCloseTo(2.5, 5);
    expect(wavSeconds(Buffer.from('not a wav file at all'))).toBeUndefined();
    // A header cut inside the fmt chunk is unreadable, never a crash.
    expect(
      wavSeconds(Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt '), Buffer.alloc(12)])),
    ).toBeUndefined();
  });

  it('measures image work as pixels × steps × count with defaults', () => {
    expect(imageWork({ size: '256x128', steps: 4, n: 2 })).toEqual({
      imagePixels: 32768,
      imageSteps: 4,
      imageCount: 2,
    });
    expect(imageWork({})).toEqual({ imagePixels: 512 * 512, imageSteps: 20, imageCount: 1 });
    expect(parseSize('12x')).toBeUndefined();
  });

  it('takes generated tokens from usage', () => {
    expect(usageTokens({ usage: { completion_tokens: 7 } })).toBe(7);
    expect(usageTokens({})).toBeUndefined();
  });
});

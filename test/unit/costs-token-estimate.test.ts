import { describe, expect, it } from 'vitest';
import {
  estimatePromptTokens,
  estimateTokens,
  expectedAnswerTokens,
  meanEstimatedTokens,
  type TokenSample,
  tokenProfile,
  tokenUpperBound,
} from '../../src-router/costs';

const s = (bodyBytes: number, promptTokens: number, answerTokens?: number): TokenSample => ({
  bodyBytes,
  promptTokens,
  answerTokens,
});

describe('token profile (LLM-3)', () => {
  it('no profile below min_samples: no estimate, and the safe upper bound stands in (PROBE-2)', () => {
    const p = tokenProfile([s(400, 100), s(400, 100)], 3);
    expect(p).toBeNull();
    expect(estimatePromptTokens(4000, p)).toBeNull();
    // bytes (never fewer than tokens) + the answer's room: max_tokens, else the reserve
    expect(estimateTokens(4000, p, undefined, 512)).toBe(4512);
    expect(estimateTokens(4000, p, 64, 512)).toBe(4064);
    expect(meanEstimatedTokens([{ bodyBytes: 10 }, { bodyBytes: 30, maxTokens: 8 }], p, 512)).toBe((522 + 38) / 2);
    expect(meanEstimatedTokens([], p, 512)).toBeNull();
  });

  it('an estimate never exceeds the safe upper bound', () => {
    // a profile measuring fewer than one byte per token would estimate more tokens than bytes
    const p = tokenProfile([s(50, 100), s(50, 100), s(50, 100)], 3);
    expect(estimateTokens(1000, p, 10, 512)).toBe(tokenUpperBound(1000, 10, 512));
  });

  it('the ratio is pulled conservative by its measured spread: mean − 1 σ', () => {
    // ratios 3, 4, 5: mean 4, sample σ 1 → 3 bytes per token
    const p = tokenProfile([s(300, 100, 10), s(400, 100, 20), s(500, 100, 30)], 3);
    expect(p).toMatchObject({
      meanBytesPerToken: 4,
      spreadBytesPerToken: 1,
      bytesPerToken: 3,
      meanAnswerTokens: 20,
      samples: 3,
    });
    expect(estimatePromptTokens(3000, p)).toBe(1000);
  });

  it('no spread: the mean itself', () => {
    expect(tokenProfile([s(400, 100), s(800, 200), s(40, 10)], 3)?.bytesPerToken).toBe(4);
  });

  it('a skewed spread is floored at the lowest ratio actually measured, never zero or negative', () => {
    // ratios 3, 3, 3, 3, 40: mean 10.4, σ ≈ 16.5 → mean − σ < 0 → floor 3
    const p = tokenProfile([s(300, 100), s(300, 100), s(300, 100), s(300, 100), s(4000, 100)], 5);
    expect(p?.meanBytesPerToken).toBeCloseTo(10.4, 9);
    expect(p?.bytesPerToken).toBe(3);
  });

  it('skips samples without a body or prompt tokens', () => {
    expect(tokenProfile([s(0, 10), s(100, 0), s(400, 100)], 2)).toBeNull();
  });
});

describe('estimateTokens (LLM-2/3)', () => {
  // measured on bodies up to 4 KB, at 4 bytes per token
  const p = tokenProfile([s(400, 100, 100), s(4000, 1000, 300), s(2000, 500, 200)], 3);

  it('prompt estimate + the client max_tokens when stated', () => {
    expect(estimateTokens(4000, p, 50, 512)).toBe(1000 + 50);
  });

  it('no max_tokens: the reserve is only the floor for the answer', () => {
    expect(estimateTokens(4000, p, undefined, 512)).toBe(1000 + 512);
    expect(estimateTokens(4000, p, undefined, 64)).toBe(1000 + 200); // the measured mean answer is larger
  });

  it('the mean estimated size of queued requests', () => {
    expect(
      meanEstimatedTokens(
        [
          { bodyBytes: 4000, maxTokens: 0 },
          { bodyBytes: 8000, maxTokens: 0 },
        ],
        p,
        512,
      ),
    ).toBe(1500);
    expect(meanEstimatedTokens([], p, 512)).toBeNull();
  });

  it('expected answer tokens (the work of a held text request): mean answer capped by max_tokens', () => {
    expect(expectedAnswerTokens(p, undefined)).toBe(200);
    expect(expectedAnswerTokens(p, 50)).toBe(50);
    expect(expectedAnswerTokens(null, 70)).toBe(70);
    expect(expectedAnswerTokens(null, undefined)).toBeNull();
  });
});

describe('a profile is not stretched far beyond what it measured (LLM-2/3)', () => {
  it('a body over twice the largest measured one is sized by the safe bound', () => {
    // short chats: ~120 bytes, ~6 tokens each (mostly JSON around the message): ratio 20
    const p = tokenProfile([s(120, 6), s(120, 6), s(120, 6)], 3);
    expect(p?.maxBodyBytes).toBe(120);
    expect(estimateTokens(200, p, 10, 512)).toBe(20); // within reach: 200 / 20 + 10
    expect(estimateTokens(6000, p, 10, 512)).toBe(tokenUpperBound(6000, 10, 512)); // 6 KB is no 300-token request
  });
});

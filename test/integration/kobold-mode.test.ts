import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNode, type TestNode, wavFile } from '../support/node-harness';

interface Lane {
  lane: string;
  loaded: string | null;
  pid: number | null;
}

// HEALTH-3: in kobold mode one shared KoboldCpp process serves every lane; its capability check is /api/extra/version.
describe('kobold mode: one shared process', () => {
  let node: TestNode;
  let openai: OpenAI;

  beforeAll(async () => {
    node = await startNode({
      config: { backend: { mode: 'kobold' } },
      models: {
        kobold: {
          name: 'kobold-all',
          backend: 'sim',
          capabilities: ['text', 'image', 'transcription'],
          sim: { load_time: '100ms', token_time: '1ms', step_time: '1ms' },
        },
      },
    });
    openai = new OpenAI({ baseURL: `${node.url}/v1`, apiKey: 'x', maxRetries: 0 });
  });
  afterAll(() => node?.stop());

  it('serves chat, image (translated to txt2img) and transcription from the same process', async () => {
    const chat = await openai.chat.completions.create({
      model: 'kobold-all',
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 3,
    });
    expect(chat.model).toBe('kobold-all');
    const pid = (await node.console<{ lanes: Lane[] }>('/router/v1/console/lanes')).lanes[0];
    expect(pid).toMatchObject({ lane: 'shared', loaded: 'kobold' });
    const img = await openai.images.generate({ model: 'kobold-all', prompt: 'x', size: '128x64' as '256x256', n: 2 });
    expect(img.data).toHaveLength(2);
    expect(Buffer.from(img.data![0].b64_json!, 'base64').subarray(1, 4).toString()).toBe('PNG');
    const t = await openai.audio.transcriptions.create({
      model: 'kobold-all',
      file: await toFile(wavFile(0.5), 'a.wav'),
    });
    expect(t.text.length).toBeGreaterThan(0);
    const lanes = (await node.console<{ lanes: Lane[] }>('/router/v1/console/lanes')).lanes;
    expect(lanes).toHaveLength(1);
    expect(lanes[0].pid).toBe(pid.pid);
  });
});

import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Ollama } from 'ollama';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startNode, type TestNode, wavFile } from '../support/node-harness';

// The client API end to end: real node process, real sim engine processes, the official openai and ollama clients.
const fast = { load_time: '100ms', token_time: '2ms', step_time: '2ms', audio_time_per_second: '10ms' };

describe('client API over sim engines (ID-3, ID-4, HEALTH-3)', () => {
  let node: TestNode;
  let openai: OpenAI;
  let ollama: Ollama;

  beforeAll(async () => {
    node = await startNode({
      models: {
        'chat-a': {
          name: 'sim-chat',
          backend: 'sim',
          capabilities: ['text', 'embedding'],
          contextsize: 4096,
          sim: { ...fast, tokens: 6 },
        },
        'chat-b': {
          name: 'sim-chat',
          backend: 'sim',
          capabilities: ['text', 'embedding'],
          contextsize: 4096,
          sim: { ...fast, tokens: 6 },
        },
        painter: { name: 'sim-image', backend: 'sim', capabilities: ['image'], sim: fast },
        ears: { name: 'sim-whisper', backend: 'sim', capabilities: ['transcription'], sim: fast },
      },
    });
    openai = new OpenAI({ baseURL: `${node.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    ollama = new Ollama({ host: node.url });
  });
  afterAll(() => node?.stop());

  it('lists public model IDs once each, on both APIs', async () => {
    const models = await openai.models.list();
    expect(models.data.map((m) => m.id).sort()).toEqual(['sim-chat', 'sim-image', 'sim-whisper']);
    const tags = await ollama.list();
    expect(tags.models.map((m) => m.name).sort()).toEqual(['sim-chat', 'sim-image', 'sim-whisper']);
  });

  it('answers a chat completion with the public model ID', async () => {
    const r = await openai.chat.completions.create({
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 5,
    });
    expect(r.model).toBe('sim-chat');
    expect(r.choices[0].message.content?.length).toBeGreaterThan(0);
    expect(r.usage?.completion_tokens).toBe(5);
  });

  it('streams chunk by chunk with the public model ID in every chunk', async () => {
    const stream = await openai.chat.completions.create({
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 8,
      stream: true,
    });
    const models = new Set<string>();
    let text = '';
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      models.add(chunk.model);
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    expect([...models]).toEqual(['sim-chat']);
    expect(chunks).toBeGreaterThanOrEqual(8);
    expect(text.length).toBeGreaterThan(0);
  });

  it('serves completions and embeddings', async () => {
    const c = await openai.completions.create({ model: 'sim-chat', prompt: 'once upon', max_tokens: 3 });
    expect(c.model).toBe('sim-chat');
    expect(c.choices[0].text.length).toBeGreaterThan(0);
    const e = await openai.embeddings.create({ model: 'sim-chat', input: ['a', 'b'] });
    expect(e.data).toHaveLength(2);
    expect(e.model).toBe('sim-chat');
    expect(e.data[0].embedding.every((x) => typeof x === 'number')).toBe(true);
  });

  it('generates an image and transcribes audio', async () => {
    const img = await openai.images.generate({ model: 'sim-image', prompt: 'a lighthouse', size: '256x256', n: 1 });
    expect(Buffer.from(img.data![0].b64_json!, 'base64').subarray(1, 4).toString()).toBe('PNG');
    const t = await openai.audio.transcriptions.create({
      model: 'sim-whisper',
      file: await toFile(wavFile(1.5), 'clip.wav', { type: 'audio/wav' }),
    });
    expect(typeof t.text).toBe('string');
    expect(t.text.length).toBeGreaterThan(0);
  });

  it('speaks Ollama: chat (stream and not), generate, embed', async () => {
    const chat = await ollama.chat({
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
      options: { num_predict: 4 },
    });
    expect(chat.model).toBe('sim-chat');
    expect(chat.done).toBe(true);
    expect(chat.message.content.length).toBeGreaterThan(0);
    const parts = [];
    for await (const p of await ollama.chat({
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      options: { num_predict: 4 },
    }))
      parts.push(p);
    expect(parts.length).toBe(5);
    expect(parts.at(-1)!.done).toBe(true);
    expect(parts.every((p) => p.model === 'sim-chat')).toBe(true);
    const gen = await ollama.generate({ model: 'sim-chat', prompt: 'say', stream: false, options: { num_predict: 3 } });
    expect(gen.response?.length).toBeGreaterThan(0);
    const emb = await ollama.embed({ model: 'sim-chat', input: ['x', 'y', 'z'] });
    expect(emb.embeddings).toHaveLength(3);
  });

  it('rotates two configs with the same name on one node (ID-4) and records every request and load', async () => {
    const since = Date.now();
    for (let i = 0; i < 4; i++)
      await openai.chat.completions.create({
        model: 'sim-chat',
        messages: [{ role: 'user', content: `n${i}` }],
        max_tokens: 1,
      });
    // Analytics rows are written in batches off the request path, in order (issue #9): once these four are written,
    // so is every row recorded before them.
    await eventually(
      () => {
        const db = new Database(join(node.dir, 'store', 'router.db'), { readonly: true });
        try {
          return (
            (
              db
                .prepare("SELECT COUNT(*) AS n FROM request_analytics WHERE endpoint = 'chat' AND finished_at >= ?")
                .get(since) as { n: number }
            ).n === 4
          );
        } finally {
          db.close();
        }
      },
      { what: 'the four chat rows written' },
    );
    const db = new Database(join(node.dir, 'store', 'router.db'), { readonly: true });
    try {
      const last4 = db
        .prepare("SELECT local_id FROM request_analytics WHERE endpoint = 'chat' ORDER BY id DESC LIMIT 4")
        .all() as { local_id: string }[];
      expect(new Set(last4.map((r) => r.local_id))).toEqual(new Set(['chat-a', 'chat-b']));
      const chat = db
        .prepare("SELECT * FROM request_analytics WHERE endpoint = 'chat' AND streamed = 1 LIMIT 1")
        .get() as Record<string, number>;
      expect(chat).toMatchObject({
        model: 'sim-chat',
        node_id: 'test-node',
        tokens_generated: 8,
        outcome: 'ok',
        status: 200,
      });
      expect(chat.prompt_bytes).toBeGreaterThan(20);
      const image = db.prepare("SELECT * FROM request_analytics WHERE endpoint = 'image'").get() as Record<
        string,
        number
      >;
      expect(image).toMatchObject({ image_pixels: 65536, image_steps: 20, image_count: 1, outcome: 'ok' });
      const audio = db.prepare("SELECT * FROM request_analytics WHERE endpoint = 'transcription'").get() as Record<
        string,
        number
      >;
      expect(audio.audio_seconds).toBeCloseTo(1.5, 3);
      const loads = db
        .prepare('SELECT local_id, lane, success, displaced_local_id FROM load_analytics ORDER BY id')
        .all() as Record<string, unknown>[];
      expect(loads).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ local_id: 'painter', lane: 'image', success: 1 }),
          expect.objectContaining({ local_id: 'ears', lane: 'whisper', success: 1 }),
        ]),
      );
      // chat-a and chat-b share the text lane: rotating between them switches the lane, displacing the other.
      expect(loads.some((l) => l.displaced_local_id === 'chat-a' || l.displaced_local_id === 'chat-b')).toBe(true);
    } finally {
      db.close();
    }
  });

  it('publishes router metrics in Prometheus text', async () => {
    const text = await (await fetch(`${node.url}/metrics`)).text();
    expect(text).toMatch(/routerdesk_requests_total\{model="sim-chat",endpoint="chat",outcome="ok"\} \d+/);
    expect(text).toMatch(/routerdesk_engine_state\{model="sim-image",local_id="painter",state="ready"\} 1/);
    expect(text).toContain('routerdesk_engine_loads_total');
  });
});

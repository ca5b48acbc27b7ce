// The built-in llama-node engine, in process, over a tiny GGUF written by the project, called with the official
// `openai` client. One scenario: load → serve every endpoint → cancel a stream.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTinyLlamaGguf } from '../../src-router/engines/llama-node/gguf-writer';
import {
  IMAGE_NOT_SUPPORTED,
  type LlamaEngineHandle,
  startLlamaEngine,
} from '../../src-router/engines/llama-node/server';

const EMBD = 64;
type ErrorBody = { error: { code: number; message: string; type: string } };
let dir: string;
let engine: LlamaEngineHandle;
let openai: OpenAI;
let releaseLoad: () => void;

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${engine.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no ${name} in /metrics`);
  return Number(line.split(' ')[1]);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'llama-engine-'));
  const modelPath = join(dir, 'tiny.gguf');
  await writeTinyLlamaGguf(modelPath, { embd: EMBD, layers: 2, type: 'f32', seed: 11, ctx: 2048 });
  const gate = new Promise<void>((resolve) => (releaseLoad = resolve));
  engine = await startLlamaEngine({
    port: 0,
    modelPath,
    alias: 'tiny',
    contextSize: 2048,
    parallel: 2,
    threads: 1,
    useMmap: true,
    loadGate: gate,
  });
  openai = new OpenAI({ baseURL: `${engine.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
});

afterAll(async () => {
  releaseLoad?.();
  await engine?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('llama-node engine', () => {
  it('answers /health with 503 while loading, then 200', async () => {
    const loading = await fetch(`${engine.url}/health`);
    expect(loading.status).toBe(503);
    expect(await loading.json()).toEqual({ error: { code: 503, message: 'Loading model', type: 'unavailable_error' } });
    releaseLoad();
    const ready = await until('health 200', async () => {
      const res = await fetch(`${engine.url}/health`);
      return res.status === 200 ? res.json() : undefined;
    });
    expect(ready).toEqual({ status: 'ok' });
    const models = await openai.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['tiny']);
  });

  it('completes a chat without streaming', async () => {
    const r = await openai.chat.completions.create({
      model: 'tiny-chat',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello world' },
      ],
      max_tokens: 8,
      temperature: 0.8,
      seed: 3,
    });
    expect(r.object).toBe('chat.completion');
    expect(r.model).toBe('tiny-chat');
    expect(r.choices[0].message.role).toBe('assistant');
    expect(typeof r.choices[0].message.content).toBe('string');
    expect(['stop', 'length']).toContain(r.choices[0].finish_reason);
    expect(r.usage?.prompt_tokens).toBeGreaterThan(5);
    expect(r.usage?.completion_tokens).toBeGreaterThan(0);
    expect(r.usage?.completion_tokens).toBeLessThanOrEqual(8);
    expect(r.usage?.total_tokens).toBe((r.usage?.prompt_tokens ?? 0) + (r.usage?.completion_tokens ?? 0));
  });

  it('streams a chat in several chunks, then the finish reason and usage', async () => {
    const stream = await openai.chat.completions.create({
      model: 'tiny-stream',
      messages: [{ role: 'user', content: 'how are you' }],
      max_tokens: 24,
      seed: 5,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const content = chunks.filter((c) => c.choices[0]?.delta?.content);
    expect(content.length).toBeGreaterThan(2);
    expect(chunks.every((c) => c.model === 'tiny-stream' && c.object === 'chat.completion.chunk')).toBe(true);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(content[0].choices[0].delta.role).toBe('assistant');
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage?.completion_tokens).toBeGreaterThan(2);
  });

  it('completes a prompt, plain and streamed', async () => {
    const r = await openai.completions.create({ model: 'tiny', prompt: 'hello world', max_tokens: 6, seed: 1 });
    expect(r.object).toBe('text_completion');
    expect(r.model).toBe('tiny');
    expect(typeof r.choices[0].text).toBe('string');
    expect(r.usage?.completion_tokens).toBeLessThanOrEqual(6);
    const stream = await openai.completions.create({
      model: 'other',
      prompt: 'the router',
      max_tokens: 6,
      seed: 1,
      stream: true,
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((c) => c.model === 'other')).toBe(true);
    expect(chunks[chunks.length - 1].choices[0].finish_reason).not.toBeNull();
  });

  it('embeds one or many inputs as vectors of the model width', async () => {
    const many = await openai.embeddings.create({ model: 'tiny', input: ['hello', 'world', 'how are you'] }); // base64 on the wire
    expect(many.data).toHaveLength(3);
    expect(many.data.map((d) => d.index)).toEqual([0, 1, 2]);
    for (const d of many.data) {
      expect(d.embedding).toHaveLength(EMBD);
      expect(d.embedding.every((x) => typeof x === 'number' && Number.isFinite(x))).toBe(true);
    }
    const one = await openai.embeddings.create({ model: 'tiny', input: 'hello', encoding_format: 'float' });
    expect(one.data).toHaveLength(1);
    expect(one.data[0].embedding).toHaveLength(EMBD);
    expect(one.data[0].embedding[0]).toBeCloseTo(many.data[0].embedding[0], 5);
    expect(one.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('answers malformed JSON and bad bodies with OpenAI-shaped 400s', async () => {
    const post = (body: string) =>
      fetch(`${engine.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
    const malformed = await post('{"messages": [');
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as ErrorBody).error).toMatchObject({ code: 400, type: 'invalid_request_error' });
    const empty = await post('{"messages": []}');
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as ErrorBody).error.message).toMatch(/messages/);
  });

  it('refuses image input with a 400 saying image input is not supported, and still serves text after', async () => {
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    const bodies = [
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is it' },
              { type: 'image_url', image_url: { url: png } },
            ],
          },
        ],
      },
      { messages: [{ role: 'user', content: [{ type: 'input_image', image_url: png }] }], stream: true },
      { messages: [{ role: 'user', content: 'what is it', images: ['iVBORw0KGgo='] }] },
    ];
    for (const body of bodies) {
      const res = await fetch(`${engine.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, max_tokens: 2 }),
      });
      expect(res.status).toBe(400);
      const err = (await res.json()) as ErrorBody;
      expect(err).toEqual({ error: { code: 400, message: IMAGE_NOT_SUPPORTED, type: 'invalid_request_error' } });
      expect(err.error.message).toMatch(/^image input is not supported/);
    }
    const sdkError = await openai.chat.completions
      .create({
        model: 'tiny',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: png } }] }],
        max_tokens: 2,
      })
      .catch((e: unknown) => e);
    expect(sdkError).toBeInstanceOf(OpenAI.BadRequestError);
    const ok = await openai.chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 2,
    });
    expect(ok.choices[0].message.role).toBe('assistant');
  });

  it('aborts the generation when a streaming client goes away, and frees its sequence', async () => {
    const before = await metric('llama_node_cancelled_total');
    const stream = await openai.chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: 'tell me everything' }],
      temperature: 1.5,
      seed: 9,
      stream: true,
    });
    let received = 0;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta?.content) received++;
      if (received === 2) break; // leaving the loop aborts the HTTP request
    }
    expect(received).toBe(2);
    await until('cancelled counter', async () =>
      (await metric('llama_node_cancelled_total')) === before + 1 ? true : undefined,
    );
    await until('free sequences', async () => ((await metric('clutch_active_slots')) === 0 ? true : undefined));
    expect(await metric('llama_node_requests_active')).toBe(0);
    const after = await openai.chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: 'still there?' }],
      max_tokens: 4,
    });
    expect(after.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('queues requests beyond its parallel sequences and serves them all', async () => {
    const requests = Array.from({ length: 5 }, (_, i) =>
      openai.completions.create({ model: 'tiny', prompt: `request ${i}`, max_tokens: 16, seed: i }),
    );
    const results = await Promise.all(requests);
    expect(results.every((r) => (r.usage?.completion_tokens ?? 0) > 0)).toBe(true);
    expect(await metric('clutch_queue_depth')).toBe(0);
    expect(await metric('llama_node_tokens_generated_total')).toBeGreaterThan(0);
  });
});

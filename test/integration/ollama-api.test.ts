import { statSync } from 'node:fs';
import { join } from 'node:path';
import { type ChatResponse, type GenerateResponse, Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTinyLlamaGguf } from '../../src-router/engines/llama-node/gguf-writer';
import { startNode, type TestNode, tempDir } from '../support/node-harness';

// Issue #11, Ollama's API as real clients use it: the ollama npm client for every endpoint (streamed and not), raw
// HTTP for what curl sends, on a real node with real sim engines and a real GGUF header behind the model facts.
const fast = { load_time: '100ms', token_time: '2ms' };
const CONTEXT = 2048;

type Durations = Pick<GenerateResponse, 'total_duration' | 'load_duration' | 'prompt_eval_duration' | 'eval_duration'>;

/** Ollama's durations are nanoseconds measured inside the request: each part within the total, the total within the wall time. */
function expectConsistent(d: Durations, wallMs: number) {
  for (const v of [d.total_duration, d.load_duration, d.prompt_eval_duration, d.eval_duration])
    expect(Number.isInteger(v) && v >= 0).toBe(true);
  expect(d.total_duration).toBeLessThanOrEqual(wallMs * 1e6);
  expect(d.load_duration + d.prompt_eval_duration + d.eval_duration).toBeLessThanOrEqual(d.total_duration);
}

async function timed<T>(f: () => Promise<T>): Promise<{ value: T; wallMs: number }> {
  const t0 = performance.now();
  const value = await f();
  return { value, wallMs: performance.now() - t0 };
}

describe('Ollama API over sim engines (issue #11)', () => {
  let node: TestNode;
  let ollama: Ollama;
  let weights: string;
  const dir = tempDir('routerdesk-ollama-');
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${node.url}${path}`, { method: 'POST', body, headers });

  beforeAll(async () => {
    weights = join(dir, 'tiny.gguf');
    await writeTinyLlamaGguf(weights, { embd: 64, layers: 2, type: 'f16', seed: 5, ctx: 4096 });
    node = await startNode({
      dir,
      models: {
        chat: {
          name: 'sim-chat',
          backend: 'sim',
          capabilities: ['text', 'embedding'],
          contextsize: CONTEXT,
          model: weights,
          sim: { ...fast, tokens: 6 },
        },
        eyes: { name: 'sim-vision', backend: 'sim', capabilities: ['multimodal'], sim: fast },
      },
    });
    ollama = new Ollama({ host: node.url });
  });
  afterAll(() => node?.stop());

  it('/api/tags: real sizes and the GGUF details', async () => {
    const { models } = await ollama.list();
    const chat = models.find((m) => m.name === 'sim-chat')!;
    expect(chat.size).toBe(statSync(weights).size);
    expect(chat.details).toMatchObject({
      format: 'gguf',
      family: 'llama',
      families: ['llama'],
      quantization_level: 'F16',
    });
    expect(chat.details.parameter_size).toMatch(/^\d+(\.\d+)?[KMB]$/);
    const vision = models.find((m) => m.name === 'sim-vision')!;
    expect(vision.size).toBe(0);
    expect(vision.details).toMatchObject({ format: 'sim', family: 'sim' });
  });

  it('/api/show: details, model_info with the architecture and the served context, capabilities, template, parameters', async () => {
    const show = await ollama.show({ model: 'sim-chat' });
    expect(show.details).toMatchObject({ format: 'gguf', family: 'llama', quantization_level: 'F16' });
    const info = show.model_info as unknown as Record<string, unknown>;
    expect(info['general.architecture']).toBe('llama');
    expect(info['llama.context_length']).toBe(CONTEXT);
    expect(info['llama.embedding_length']).toBe(64);
    expect(typeof info['general.parameter_count']).toBe('number');
    // Vocabularies are left out, as Ollama does without `verbose`.
    expect(info['tokenizer.ggml.tokens']).toBeNull();
    const verbose = (await (await post('/api/show', JSON.stringify({ model: 'sim-chat', verbose: true }))).json()) as {
      model_info: Record<string, unknown>;
    };
    expect(Array.isArray(verbose.model_info['tokenizer.ggml.tokens'])).toBe(true);
    expect(show.capabilities).toEqual(['completion', 'embedding']);
    expect(show.template).toContain('<|im_start|>');
    expect(show.parameters).toContain(`num_ctx ${CONTEXT}`);
    const vision = await ollama.show({ model: 'sim-vision' });
    expect(vision.capabilities).toEqual(['completion', 'vision']);
    expect(vision.details.format).toBe('sim');
    // An unknown model: Ollama's error shape.
    const res = await post('/api/show', JSON.stringify({ model: 'nope' }));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "model 'nope' not found" });
    const none = await post('/api/show', '{}');
    expect(none.status).toBe(400);
    expect(((await none.json()) as { error: string }).error).toMatch(/model/);
  });

  it('chat, not streamed: text, counts and nanosecond durations within the wall time', async () => {
    // The file's first generation: it loads the model.
    const { value: chat, wallMs } = await timed(() =>
      ollama.chat({
        model: 'sim-chat',
        messages: [{ role: 'user', content: 'hello there' }],
        stream: false,
        options: { num_predict: 5, temperature: 0, top_k: 4, seed: 1 },
      }),
    );
    expect(chat).toMatchObject({ model: 'sim-chat', done: true, done_reason: 'length', eval_count: 5 });
    expect(chat.message.content.length).toBeGreaterThan(0);
    expect(chat.prompt_eval_count).toBeGreaterThan(0);
    expect(chat.eval_duration).toBeGreaterThan(0);
    expect(chat.load_duration).toBeGreaterThan(0);
    expect(chat.total_duration).toBeGreaterThanOrEqual(chat.eval_duration);
    expectConsistent(chat, wallMs);
  });

  it('chat, streamed: the final chunk carries prompt_eval_count and eval_count', async () => {
    const parts: ChatResponse[] = [];
    const { wallMs } = await timed(async () => {
      for await (const p of await ollama.chat({
        model: 'sim-chat',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        options: { num_predict: 4 },
      }))
        parts.push(p);
    });
    const last = parts.at(-1)!;
    expect(parts.slice(0, -1).every((p) => !p.done && p.message.content.length > 0)).toBe(true);
    expect(last).toMatchObject({ done: true, eval_count: 4, model: 'sim-chat' });
    expect(last.prompt_eval_count).toBeGreaterThan(0);
    expect(last.eval_duration).toBeGreaterThan(0);
    expectConsistent(last, wallMs);
  });

  it('generate, streamed and not, with a system prompt and stop', async () => {
    const gen = await ollama.generate({
      model: 'sim-chat',
      prompt: 'say',
      system: 'be brief',
      stream: false,
      options: { num_predict: 3, stop: ['\n\n'] },
    });
    expect(gen).toMatchObject({ model: 'sim-chat', done: true, eval_count: 3 });
    expect(gen.response?.length).toBeGreaterThan(0);
    const parts: GenerateResponse[] = [];
    for await (const p of await ollama.generate({
      model: 'sim-chat',
      prompt: 'say more',
      stream: true,
      options: { num_predict: 3 },
    }))
      parts.push(p);
    expect(parts).toHaveLength(4);
    expect(parts.at(-1)).toMatchObject({ done: true, eval_count: 3 });
    expect(parts.at(-1)!.prompt_eval_count).toBeGreaterThan(0);
  });

  it('embed and the older embeddings', async () => {
    const emb = await ollama.embed({ model: 'sim-chat', input: ['x', 'y'] });
    expect(emb.embeddings).toHaveLength(2);
    expect(emb.model).toBe('sim-chat');
    expect(emb.total_duration).toBeGreaterThan(0);
    const legacy = await ollama.embeddings({ model: 'sim-chat', prompt: 'x' });
    expect(legacy.embedding.length).toBeGreaterThan(0);
  });

  it('/api/ps: the loaded model with its size, details, context length, no VRAM on CPU, and no expiry without a ttl', async () => {
    await ollama.generate({ model: 'sim-chat', prompt: 'x', stream: false, options: { num_predict: 1 } });
    const { models } = await ollama.ps();
    const m = models.find((x) => x.name === 'sim-chat')!;
    expect(m).toMatchObject({
      model: 'sim-chat',
      size: statSync(weights).size,
      size_vram: 0,
      details: { format: 'gguf', family: 'llama' },
    });
    expect((m as unknown as { context_length: number }).context_length).toBe(CONTEXT);
    expect(m.expires_at).toBeNull();
  });

  it('/api/version answers', async () => {
    expect((await ollama.version()).version.length).toBeGreaterThan(0);
  });

  it('bodies without content-type application/json are read as JSON on /api/*, not on /v1/*', async () => {
    const body = JSON.stringify({
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
      options: { num_predict: 2 },
    });
    // What `curl -d` sends.
    const form = await post('/api/chat', body, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(200);
    expect(((await form.json()) as { eval_count: number }).eval_count).toBe(2);
    // No content type at all, and a made-up one.
    for (const headers of [{}, { 'content-type': 'text/plain' }, { 'content-type': 'nonsense' }] as Record<
      string,
      string
    >[]) {
      const raw = await fetch(`${node.url}/api/generate`, {
        method: 'POST',
        body: new TextEncoder().encode(
          JSON.stringify({ model: 'sim-chat', prompt: 'x', stream: false, options: { num_predict: 1 } }),
        ),
        headers,
      });
      expect(raw.status).toBe(200);
    }
    const embed = await post('/api/embed', JSON.stringify({ model: 'sim-chat', input: 'x' }), {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(embed.status).toBe(200);
    // Still JSON: a body that is not is a clear Ollama-shaped 400.
    const bad = await post('/api/chat', 'model=sim-chat', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/not valid JSON/);
    // No body at all, whatever its stated type: the missing body is the error.
    const empty = await post('/api/chat', '', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ error: 'request body must be a JSON object' });
    // /v1/* keeps its rules.
    const v1 = await post(
      '/v1/chat/completions',
      JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }),
      { 'content-type': 'application/x-www-form-urlencoded' },
    );
    expect(v1.status).toBe(415);
  });

  it('format and options map onto the OpenAI request; bad ones get a clear Ollama error', async () => {
    // The sim engine cannot constrain its output: `format` is refused by name, never ignored (the llama.cpp engine
    // below honours it).
    const json = await post(
      '/api/chat',
      JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], stream: false, format: 'json' }),
    );
    expect(json.status).toBe(400);
    expect(((await json.json()) as { error: string }).error).toMatch(
      /^format: the model 'sim-chat' runs on a sim engine/,
    );
    const badFormat = await post('/api/generate', JSON.stringify({ model: 'sim-chat', prompt: 'x', format: 'yaml' }));
    expect(badFormat.status).toBe(400);
    expect(((await badFormat.json()) as { error: string }).error).toMatch(/^format: /);
    // num_ctx within the window the engine runs is fine; beyond it, refused rather than silently cut.
    expect(
      (
        await ollama.generate({
          model: 'sim-chat',
          prompt: 'x',
          stream: false,
          options: { num_predict: 1, num_ctx: 1024 },
        })
      ).done,
    ).toBe(true);
    const big = await post(
      '/api/generate',
      JSON.stringify({ model: 'sim-chat', prompt: 'x', stream: false, options: { num_ctx: 8192 } }),
    );
    expect(big.status).toBe(400);
    expect(((await big.json()) as { error: string }).error).toMatch(
      /options.num_ctx: 8192 is more than the context window of model 'sim-chat' \(2048 tokens/,
    );
    const badKeep = await post('/api/generate', JSON.stringify({ model: 'sim-chat', prompt: 'x', keep_alive: 'soon' }));
    expect(badKeep.status).toBe(400);
    expect(((await badKeep.json()) as { error: string }).error).toMatch(/^keep_alive: not a duration/);
  });

  it('pull, push, create, copy and delete answer 501: models are managed through model configs', async () => {
    const calls: [string, () => Promise<unknown>][] = [
      ['/api/pull', () => ollama.pull({ model: 'llama3', stream: false })],
      ['/api/push', () => ollama.push({ model: 'sim-chat', stream: false })],
      ['/api/create', () => ollama.create({ model: 'mine', from: 'sim-chat', stream: false })],
      ['/api/copy', () => ollama.copy({ source: 'sim-chat', destination: 'other' })],
      ['/api/delete', () => ollama.delete({ model: 'sim-chat' })],
    ];
    for (const [path, call] of calls) {
      const err = (await call().then(
        () => undefined,
        (e: unknown) => e,
      )) as { status_code?: number; error?: string } | undefined;
      expect(err?.status_code, path).toBe(501);
      expect(err?.error).toContain(`${path} is not supported: models on this node are managed through model configs`);
    }
    const raw = await post('/api/pull', JSON.stringify({ model: 'x' }));
    expect(raw.status).toBe(501);
    expect(Object.keys((await raw.json()) as object)).toEqual(['error']);
  });
});

describe('Ollama API over the built-in llama.cpp engine: measured timings (issue #11)', () => {
  let node: TestNode;
  let ollama: Ollama;
  const dir = tempDir('routerdesk-ollama-llama-');

  beforeAll(async () => {
    const weights = join(dir, 'tiny.gguf');
    await writeTinyLlamaGguf(weights, { embd: 64, layers: 2, type: 'f32', seed: 3, ctx: 512 });
    node = await startNode({
      dir,
      models: {
        tiny: {
          name: 'tiny',
          backend: 'llama-node',
          capabilities: ['text'],
          model: weights,
          contextsize: 512,
          parallel: 1,
          llama_node: { threads: 1 },
        },
      },
    });
    ollama = new Ollama({ host: node.url });
  });
  afterAll(() => node?.stop());

  it("load, prompt and generation times are the engine's, in nanoseconds, non-zero and within the wall time", async () => {
    // The first request loads the model.
    const { value: gen, wallMs } = await timed(() =>
      ollama.generate({
        model: 'tiny',
        prompt: 'hello world',
        stream: false,
        options: { num_predict: 4, temperature: 0 },
      }),
    );
    expect(gen.eval_count).toBeGreaterThan(0);
    expect(gen.prompt_eval_count).toBeGreaterThan(0);
    expect(gen.load_duration).toBeGreaterThan(0);
    expect(gen.prompt_eval_duration).toBeGreaterThan(0);
    expect(gen.eval_duration).toBeGreaterThan(0);
    expectConsistent(gen, wallMs);
    const show = await ollama.show({ model: 'tiny' });
    expect(show.capabilities).toContain('tools');
    expect((show.model_info as unknown as Record<string, unknown>)['llama.context_length']).toBe(512);
  });

  it('format "json" and a JSON-schema format are honoured by the llama.cpp engine (mapped to response_format)', async () => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
    const gen = await ollama.generate({
      model: 'tiny',
      prompt: 'answer',
      stream: false,
      format: schema,
      options: { num_predict: 64, temperature: 0 },
    });
    expect(gen.done).toBe(true);
    expect(JSON.parse(gen.response ?? '')).toEqual({ ok: expect.any(Boolean) });
    const chat = await ollama.chat({
      model: 'tiny',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
      format: 'json',
      options: { num_predict: 4 },
    });
    expect(chat.done).toBe(true);
  });

  it("a streamed chat ends with the counts and the engine's times; loaded already, no load time", async () => {
    const parts: ChatResponse[] = [];
    const { wallMs } = await timed(async () => {
      for await (const p of await ollama.chat({
        model: 'tiny',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        options: { num_predict: 4 },
      }))
        parts.push(p);
    });
    const last = parts.at(-1)!;
    expect(last.done).toBe(true);
    expect(last.prompt_eval_count).toBeGreaterThan(0);
    expect(last.eval_count).toBeGreaterThan(0);
    expect(last.prompt_eval_duration).toBeGreaterThan(0);
    expect(last.eval_duration).toBeGreaterThan(0);
    expect(last.load_duration).toBe(0);
    expectConsistent(last, wallMs);
  });
});

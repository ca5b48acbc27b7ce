import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startNode, type TestNode, tempDir } from '../support/node-harness';
import { REAL_ENGINES_TIMEOUT_MS } from '../support/real-engines';
import { llamaServerModel, tinyGguf } from '../support/real-llama';

// The client APIs through a node in front of the real llama-server (built from the llama.cpp source node-llama-cpp
// ships), with a tiny random-weights model: completions, the Responses and Ollama translations, embeddings, a stream
// the client leaves (its slot freed), and the engine's own errors reaching the client as clear errors naming it.
// Requests that must succeed never depend on the random text being well-formed: their engines ban the byte tokens
// (WELL_FORMED_FLAGS), and they use no grammar (llama-server's grammar sampler fails on the tiny vocabulary).

interface Lane {
  loaded: string | null;
  port: number | null;
}
interface Slot {
  id: number;
  is_processing: boolean;
}

describe('client APIs through a real llama-server', () => {
  const dir = tempDir('routerdesk-real-llama-');
  let node: TestNode;

  const post = (path: string, body: unknown, signal?: AbortSignal) =>
    fetch(`${node.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
  const json = async (path: string, body: unknown) => {
    const res = await post(path, body);
    return { status: res.status, body: (await res.json()) as any };
  };
  /** The port of the engine process serving `localId` (loaded by a request first). */
  const enginePort = async (localId: string) => {
    const { lanes } = await node.console<{ lanes: Lane[] }>('/router/v1/console/lanes');
    return lanes.find((l) => l.loaded === localId)?.port ?? undefined;
  };

  beforeAll(async () => {
    const chatWeights = await tinyGguf(dir, 'chat', { embd: 64, seed: 21 });
    const embedWeights = await tinyGguf(dir, 'embed', { embd: 64, seed: 22 });
    // Bigger and with a long context: one answer of the whole context lasts far longer than the test waits for.
    const slowWeights = await tinyGguf(dir, 'slow', { embd: 384, layers: 4, seed: 23, ctx: 8192 });
    node = await startNode({
      dir,
      models: {
        plain: await llamaServerModel('tiny-plain', chatWeights),
        raw: await llamaServerModel('tiny-raw', chatWeights, { wellFormed: false }),
        embed: await llamaServerModel('tiny-embed', embedWeights, {
          capabilities: ['embedding'],
          extra: ['--embeddings', '--pooling', 'mean'],
        }),
        slow: await llamaServerModel('tiny-slow', slowWeights, { ctx: 8192 }),
      },
    });
  }, REAL_ENGINES_TIMEOUT_MS);
  afterAll(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('/v1/completions: llama-server’s answer with usage and timings', async () => {
    const r = await json('/v1/completions', {
      model: 'tiny-plain',
      prompt: 'once upon a time',
      max_tokens: 6,
      seed: 1,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ object: 'text_completion', model: 'tiny-plain' });
    expect(typeof r.body.choices[0].text).toBe('string');
    expect(['length', 'stop']).toContain(r.body.choices[0].finish_reason);
    expect(r.body.usage.completion_tokens).toBeGreaterThan(0);
    expect(r.body.usage.completion_tokens).toBeLessThanOrEqual(6);
    expect(r.body.timings.predicted_n).toBe(r.body.usage.completion_tokens);
  });

  it('/v1/responses: a completed or incomplete response with output text and usage', async () => {
    const r = await json('/v1/responses', { model: 'tiny-plain', input: 'hello', max_output_tokens: 6 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ object: 'response', model: 'tiny-plain' });
    expect(['completed', 'incomplete']).toContain(r.body.status);
    const message = r.body.output.find((o: { type: string }) => o.type === 'message');
    expect(message.content[0].type).toBe('output_text');
    expect(typeof message.content[0].text).toBe('string');
    expect(r.body.usage.output_tokens).toBeGreaterThan(0);
    expect(r.body.usage.input_tokens).toBeGreaterThan(0);
  });

  it('/api/chat and /api/generate: Ollama answers with the counts, streamed as NDJSON too', async () => {
    const chat = await json('/api/chat', {
      model: 'tiny-plain',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
      options: { num_predict: 5, seed: 3 },
    });
    expect(chat.status, JSON.stringify(chat.body)).toBe(200);
    expect(chat.body).toMatchObject({ model: 'tiny-plain', done: true, message: { role: 'assistant' } });
    expect(typeof chat.body.message.content).toBe('string');
    expect(chat.body.eval_count).toBeGreaterThan(0);
    expect(chat.body.prompt_eval_count).toBeGreaterThan(0);
    const gen = await json('/api/generate', {
      model: 'tiny-plain',
      prompt: 'hi',
      stream: false,
      options: { num_predict: 5, seed: 3 },
    });
    expect(gen.status, JSON.stringify(gen.body)).toBe(200);
    expect(gen.body).toMatchObject({ model: 'tiny-plain', done: true });
    expect(typeof gen.body.response).toBe('string');
    expect(gen.body.eval_count).toBeGreaterThan(0);
    const lines = (
      await (await post('/api/generate', { model: 'tiny-plain', prompt: 'hi', options: { num_predict: 4 } })).text()
    )
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.at(-1)).toMatchObject({ done: true });
    expect(lines.slice(0, -1).every((l) => l.done === false && typeof l.response === 'string')).toBe(true);
  });

  it('/v1/embeddings: one vector of the model’s width per input, from llama-server --embeddings', async () => {
    const r = await json('/v1/embeddings', { model: 'tiny-embed', input: ['first text', 'second'] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toHaveLength(2);
    for (const [i, d] of r.body.data.entries()) {
      expect(d).toMatchObject({ object: 'embedding', index: i });
      expect(d.embedding).toHaveLength(64);
      expect(d.embedding.every((x: unknown) => typeof x === 'number' && Number.isFinite(x))).toBe(true);
    }
    expect(r.body.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('a client that leaves a stream frees the engine’s slot (llama-server /slots idle again)', async () => {
    // Loaded first, so the engine's port is known before the stream starts.
    expect((await json('/v1/completions', { model: 'tiny-slow', prompt: 'x', max_tokens: 1 })).status).toBe(200);
    const port = await enginePort('slow');
    expect(port).toBeTypeOf('number');
    const slots = async () => (await (await fetch(`http://127.0.0.1:${port}/slots`)).json()) as Slot[];
    const predicted = async () =>
      Number(
        (await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).match(
          /^llamacpp:tokens_predicted_total (\S+)$/m,
        )![1],
      );
    const before = await predicted();
    const ac = new AbortController();
    // The whole context past end-of-text: only the client leaving ends it early.
    const res = await post(
      '/v1/completions',
      { model: 'tiny-slow', prompt: 'a long story', max_tokens: 8000, ignore_eos: true, stream: true },
      ac.signal,
    );
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    await eventually(async () => (await slots()).some((s) => s.is_processing), { what: 'the stream on a slot' });
    ac.abort();
    await eventually(async () => (await slots()).every((s) => !s.is_processing), { what: 'every slot idle' });
    // It was stopped, not finished: far fewer tokens than it asked for.
    expect((await predicted()) - before).toBeLessThan(8000);
  });

  it('llama-server’s own errors reach the client as clear errors naming the model’s engine: a grammar, and random text that fails the template’s format', async () => {
    // The grammar sampler cannot be set up on the tiny vocabulary: llama-server's 400.
    const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] };
    const grammar = await json('/v1/chat/completions', {
      model: 'tiny-plain',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 4,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
    });
    expect(grammar.status, JSON.stringify(grammar.body)).toBe(400);
    expect(grammar.body.error).toMatchObject({ type: 'invalid_request_error', code: 'engine_rejected' });
    expect(grammar.body.error.message).toMatch(
      /^engine for model 'tiny-plain' answered 400: Failed to initialize samplers/,
    );
    // Byte tokens allowed: the first seed whose random text is not valid UTF-8 is answered 500 by the engine's parse.
    let format: { status: number; body: any } | undefined;
    for (let seed = 1; seed <= 20 && !format; seed++) {
      const r = await json('/v1/chat/completions', {
        model: 'tiny-raw',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 8,
        seed,
      });
      if (r.status !== 200) format = r;
    }
    expect(format, 'no seed in 1..20 failed the format').toBeDefined();
    expect(format!.status, JSON.stringify(format!.body)).toBe(500);
    expect(format!.body.error).toMatchObject({ type: 'server_error', code: 'engine_error' });
    expect(format!.body.error.message).toMatch(
      /^engine for model 'tiny-raw' answered 500: The model produced output that does not match the expected .* format$/,
    );
    // The same on the Ollama API, Ollama-shaped.
    const ollama = await json('/api/chat', {
      model: 'tiny-plain',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
      format: schema,
      options: { num_predict: 4 },
    });
    expect(ollama.status).toBe(400);
    expect(typeof ollama.body.error).toBe('string');
    expect(ollama.body.error).toMatch(/^engine for model 'tiny-plain' answered 400: Failed to initialize samplers/);
  });
});

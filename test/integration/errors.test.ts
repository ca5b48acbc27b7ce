import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startNode, type TestNode } from '../support/node-harness';

// A readable file stands in for the weights: the model is configured, only its engine binary is missing.
const WEIGHTS = fileURLToPath(import.meta.url);

// Every client-visible error: OpenAI-shaped on /v1, Ollama-shaped on /api, logged, nothing lost.
describe('client API errors', () => {
  let node: TestNode;
  const post = (path: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    fetch(`${node.url}${path}`, { method: 'POST', body, headers });

  beforeAll(async () => {
    node = await startNode({
      config: { server: { body_limit: 64 * 1024, upload_limit: 32 * 1024 } },
      models: {
        chat: { name: 'chat', backend: 'sim', capabilities: ['text'], sim: { load_time: '50ms', token_time: '1ms' } },
        broken: { name: 'broken', backend: 'sim', capabilities: ['text'], sim: { fail: 'crash_on_start' } },
        missing: {
          name: 'missing-binary',
          backend: 'llama-server',
          capabilities: ['text'],
          model: WEIGHTS,
          command: '/nonexistent/llama-server --port ${PORT}',
        },
        ears: { name: 'ears', backend: 'sim', capabilities: ['transcription'], sim: { load_time: '50ms' } },
        crashy: {
          name: 'crashy',
          backend: 'sim',
          capabilities: ['embedding'],
          sim: { load_time: '50ms', fail: 'crash_on_request' },
        },
        narrow: {
          name: 'narrow',
          backend: 'sim',
          capabilities: ['text'],
          max_queue: 3,
          sim: { load_time: '50ms', token_time: '100ms' },
        },
      },
    });
  });
  afterAll(() => node?.stop());

  it('unknown model → 404 model_not_found, OpenAI-shaped, also from the openai client', async () => {
    const res = await post(
      '/v1/chat/completions',
      JSON.stringify({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: {
        message: "The model 'nope' does not exist on this node",
        type: 'invalid_request_error',
        param: 'model',
        code: 'model_not_found',
      },
    });
    const client = new OpenAI({ baseURL: `${node.url}/v1`, apiKey: 'x', maxRetries: 0 });
    await expect(
      client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
  });

  it('malformed JSON → 400 invalid_json', async () => {
    const res = await post('/v1/chat/completions', '{"model": "chat", "messages": [');
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; type: string; message: string } };
    expect(body.error).toMatchObject({ code: 'invalid_json', type: 'invalid_request_error' });
  });

  it('missing or wrong fields → 400 naming the field', async () => {
    const noModel = await post('/v1/chat/completions', JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }));
    expect(noModel.status).toBe(400);
    expect(((await noModel.json()) as { error: { param: string } }).error.param).toBe('model');
    const badMessages = await post('/v1/chat/completions', JSON.stringify({ model: 'chat', messages: 'hi' }));
    expect(((await badMessages.json()) as { error: { message: string } }).error.message).toMatch(/^messages:/);
    const notObject = await post('/v1/embeddings', '[1,2]');
    expect(notObject.status).toBe(400);
  });

  it('a model asked for work it cannot do → 400', async () => {
    const res = await post('/v1/images/generations', JSON.stringify({ model: 'chat', prompt: 'x' }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/cannot serve image/);
  });

  it('body over the limit → 413, JSON and multipart', async () => {
    const big = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'x'.repeat(100 * 1024) }] });
    const res = await post('/v1/chat/completions', big);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('body_too_large');
    const form = new FormData();
    form.append('model', 'ears');
    form.append('file', new Blob([new Uint8Array(64 * 1024)]), 'big.wav');
    const up = await fetch(`${node.url}/v1/audio/transcriptions`, { method: 'POST', body: form });
    expect(up.status).toBe(413);
  });

  it('an engine that fails to start → 503 with the reason from its output', async () => {
    const res = await post(
      '/v1/chat/completions',
      JSON.stringify({ model: 'broken', messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('engine_start_failed');
    expect(body.error.message).toMatch(/engine for model 'broken' failed to start: engine exited \(exit code 1\)/);
    const missing = await post(
      '/v1/chat/completions',
      JSON.stringify({ model: 'missing-binary', messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(missing.status).toBe(503);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(/ENOENT|cannot run/);
  });

  it('after repeated failed starts the model is held with a retry time, and the console shows the error', async () => {
    for (let i = 0; i < 3; i++)
      await post(
        '/v1/chat/completions',
        JSON.stringify({ model: 'broken', messages: [{ role: 'user', content: 'x' }] }),
      );
    const res = await post(
      '/v1/chat/completions',
      JSON.stringify({ model: 'broken', messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('engine_unavailable');
    const list = await node.console<{ models: { localId: string; state: string; lastError: string | null }[] }>(
      '/router/v1/console/models',
    );
    expect(list.models.find((m) => m.localId === 'broken')).toMatchObject({
      state: 'failed',
      lastError: expect.stringMatching(/exit code 1/),
    });
    // The healthy model on the same lane still serves.
    const ok = await post(
      '/v1/chat/completions',
      JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'x' }], max_tokens: 2 }),
    );
    expect(ok.status).toBe(200);
  });

  it('an engine that crashes on every request is restarted a bounded number of times, then held (503)', async () => {
    const embed = () => post('/v1/embeddings', JSON.stringify({ model: 'crashy', input: 'x' }));
    for (let i = 0; i < 3; i++) expect((await embed()).status).toBe(502);
    const held = await embed();
    expect(held.status).toBe(503);
    expect(((await held.json()) as { error: { code: string } }).error.code).toBe('engine_unavailable');
  });

  it('Ollama errors are Ollama-shaped', async () => {
    const res = await post('/api/chat', JSON.stringify({ model: 'nope', messages: [] }));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "The model 'nope' does not exist on this node" });
    const bad = await post('/api/generate', 'not json');
    expect(bad.status).toBe(400);
    expect(typeof ((await bad.json()) as { error: unknown }).error).toBe('string');
  });

  it('unknown routes → 404; the console needs its token', async () => {
    expect((await fetch(`${node.url}/v1/nothing`)).status).toBe(404);
    const res = await fetch(`${node.url}/router/v1/console/models`, { headers: { authorization: 'Bearer wrong' } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
  });

  it('a bad token is a 401 whatever the body; a repeated query key is a 400 naming it; secrets in the query are never logged (issue #9)', async () => {
    const huge = 'x'.repeat(200 * 1024); // over the body limit: the token is judged first
    const res = await fetch(`${node.url}/router/v1/node/register`, {
      method: 'POST',
      body: huge,
      headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' },
    });
    expect(res.status).toBe(401);
    const twice = await fetch(`${node.url}/router/v1/console/decisions?limit=1&limit=2`, {
      headers: { authorization: `Bearer ${node.token}` },
    });
    expect(twice.status).toBe(400);
    expect(((await twice.json()) as { error: { param: string; message: string } }).error).toMatchObject({
      param: 'limit',
      message: expect.stringMatching(/given 2 times/),
    });
    const ollama = await fetch(`${node.url}/api/tags?x=1&x=2`);
    expect(ollama.status).toBe(400);
    expect(typeof ((await ollama.json()) as { error: unknown }).error).toBe('string');
    await fetch(`${node.url}/router/v1/console/nothing-here?token=${node.token}`);
    await eventually(() => node.output().includes('nothing-here?token=REDACTED'), {
      what: 'the refused request in the log, redacted',
    });
    expect(node.output()).not.toContain(node.token);
  });

  it("a model's max_queue bounds its waiting requests: beyond it 429 with Retry-After, OpenAI- and Ollama-shaped (issue #9)", async () => {
    const body = JSON.stringify({ model: 'narrow', messages: [{ role: 'user', content: 'x' }], max_tokens: 4 });
    await post('/v1/chat/completions', body); // loaded, so the burst below waits only for the engine
    const answers = await Promise.all(Array.from({ length: 12 }, () => post('/v1/chat/completions', body)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((st) => st === 200 || st === 429)).toBe(true);
    // one at the engine and three waiting are served; everything else was refused at once
    expect(statuses.filter((st) => st === 200).length).toBeGreaterThanOrEqual(4);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(((await r.json()) as { error: { code: string; type: string } }).error).toMatchObject({
        code: 'queue_full',
        type: 'rate_limit_error',
      });
    }
    const ollama = await Promise.all(
      Array.from({ length: 12 }, () =>
        post(
          '/api/chat',
          JSON.stringify({
            model: 'narrow',
            messages: [{ role: 'user', content: 'x' }],
            stream: false,
            options: { num_predict: 4 },
          }),
        ),
      ),
    );
    const full = ollama.find((a) => a.status === 429)!;
    expect(full).toBeDefined();
    expect(typeof ((await full.json()) as { error: unknown }).error).toBe('string');
  });

  it('logs the bad requests it refused', async () => {
    await eventually(
      () =>
        ['model_not_found', 'body_too_large', 'invalid_json', 'engine_start_failed', 'unauthorized'].every((code) =>
          node.output().includes(`"code":"${code}"`),
        ),
      { what: 'every refusal in the log' },
    );
  });
});

import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import { type SimEngineHandle, startSimEngine } from '../../src-router/engines/sim';
import { metricTypes, shapeProblems } from '../support/json-shape';
import { eventually, tempDir, wavFile } from '../support/node-harness';
import { REAL_ENGINES_TIMEOUT_MS, realEngines } from '../support/real-engines';
import { type LlamaServerProcess, startLlamaServer, tinyGguf, WELL_FORMED_FLAGS } from '../support/real-llama';

// The sim engine's llama-server shape against the real llama-server, live: the same requests to both, the same field
// names and JSON kinds both ways (what the sim leaves out or adds is a drift), /props, /slots and the /metrics names
// and types. The captures under test/support/llama-server-reference/ come from the same engine through
// scripts/capture-engine-reference.mjs; this file keeps the sim true to the engine itself.

type Json = any;
/**
 * Flags of the capture script (one slot of 512 tokens, metrics, slots, embeddings, the chatml template), and the
 * byte-token ban that keeps the random text well-formed (an answer that fails the template's format is a 500).
 */
const FLAGS = [
  '-c',
  '512',
  '-np',
  '1',
  '--metrics',
  '--slots',
  '--embeddings',
  '--pooling',
  'mean',
  '--chat-template',
  'chatml',
  '--reasoning-format',
  'none',
  ...WELL_FORMED_FLAGS,
];

describe('sim llama-server shape = the real llama-server, live', () => {
  const dir = tempDir('routerdesk-shapes-');
  let real: LlamaServerProcess;
  let sim: SimEngineHandle;
  const post = (url: string, path: string, body: unknown) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const both = async (
    path: string,
    body?: unknown,
  ): Promise<{ real: Json; sim: Json; status: { real: number; sim: number } }> => {
    const [r, s] = await Promise.all(
      [real.url, sim.url].map((u) => (body === undefined ? fetch(`${u}${path}`) : post(u, path, body))),
    );
    return { real: await r.json(), sim: await s.json(), status: { real: r.status, sim: s.status } };
  };
  /** Field names and kinds agree both ways; `optional` paths may be on one side only. */
  const sameShape = (a: Json, b: Json, optional: string[] = []) => {
    const problems = [...shapeProblems(a, b).map((p) => `sim ${p}`), ...shapeProblems(b, a).map((p) => `real ${p}`)];
    expect(problems.filter((p) => !optional.some((o) => p.includes(`${o}:`)))).toEqual([]);
  };

  beforeAll(async () => {
    const gguf = await tinyGguf(dir, 'tiny-chat', { embd: 64, layers: 2, seed: 1, ctx: 512 });
    [real, sim] = await Promise.all([
      startLlamaServer(gguf, FLAGS),
      startSimEngine({ port: 0, load_time: 0, token_time: 1, ctx: 512, parallel: 1 }),
    ]);
    await sim.loaded;
  }, REAL_ENGINES_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([real?.stop(), sim?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a chat answer: the same fields and kinds, timings included', async () => {
    const r = await both('/v1/chat/completions', {
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 4,
      seed: 1,
    });
    expect(r.status).toEqual({ real: 200, sim: 200 });
    sameShape(r.sim, r.real);
    expect(Object.keys(r.sim.timings)).toEqual(Object.keys(r.real.timings));
  });

  it('a streamed chat: the role chunk, the content chunks and the last one with timings, shaped alike', async () => {
    const events = async (url: string) => {
      const text = await (
        await post(url, '/v1/chat/completions', {
          messages: [{ role: 'user', content: 'hello' }],
          max_tokens: 3,
          seed: 1,
          stream: true,
        })
      ).text();
      const data = text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6));
      expect(data.at(-1)).toBe('[DONE]');
      return data.slice(0, -1).map((d) => JSON.parse(d) as Json);
    };
    const [r, s] = await Promise.all([events(real.url), events(sim.url)]);
    const last = (xs: Json[]) => xs.filter((x) => x.timings).at(-1);
    const contentChunk = (xs: Json[]) =>
      xs.find((x) => typeof x.choices?.[0]?.delta?.content === 'string' && !x.timings);
    sameShape(s[0], r[0]);
    if (contentChunk(r) && contentChunk(s)) sameShape(contentChunk(s), contentChunk(r));
    expect(last(r)).toBeDefined();
    sameShape(last(s), last(r), ['$.choices[0].delta.content']);
  });

  it('/v1/embeddings: the same fields and kinds', async () => {
    const r = await both('/v1/embeddings', { input: 'hello' });
    expect(r.status).toEqual({ real: 200, sim: 200 });
    sameShape(r.sim, r.real);
  });

  it('an image to a model without a projector: the same status and error body', async () => {
    const body = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
      max_tokens: 2,
    };
    const r = await both('/v1/chat/completions', body);
    expect(r.status.sim).toBe(r.status.real);
    expect(r.sim).toEqual(r.real);
  });

  it('/props: every field the sim serves is the real one’s, of the same kind, and it serves every top-level field but a few', async () => {
    const r = await both('/props');
    expect(shapeProblems(r.sim, r.real)).toEqual([]);
    // What the sim does not imitate (the web UI's settings, the media marker of multimodal prompts, the CORS proxy):
    // a field the sim drops, or a new one of the real engine, fails here until the sim serves it or it is named.
    expect(
      Object.keys(r.real)
        .filter((k) => !(k in r.sim))
        .sort(),
    ).toEqual(['cors_proxy_enabled', 'media_marker', 'ui_settings']);
    expect(r.sim).toMatchObject({
      total_slots: r.real.total_slots,
      default_generation_settings: { n_ctx: r.real.default_generation_settings.n_ctx },
      modalities: r.real.modalities,
    });
  });

  it('/slots: a slot that has run a task has the real one’s fields, in its order, of the same kinds', async () => {
    const r = await both('/slots');
    expect(r.sim).toHaveLength(r.real.length);
    expect(Object.keys(r.sim[0])).toEqual(Object.keys(r.real[0]));
    expect(shapeProblems(r.sim, r.real)).toEqual([]);
  });

  it('/metrics: the llama.cpp metric names and types of the real engine, all of them', async () => {
    const [r, s] = await Promise.all(
      [real.url, sim.url].map(async (u) => metricTypes(await (await fetch(`${u}/metrics`)).text())),
    );
    expect(s.filter((m) => m.startsWith('llamacpp:'))).toEqual(r);
  });
});

// The sim's whisper-server shape against the real whisper-server (the generated tiny model): /health, /inference in
// json and verbose_json (segments and words included), and the error of a request without a file.
describe('sim whisper-server shape = the real whisper-server, live', () => {
  let real: { url: string; stop(): Promise<void> };
  let sim: SimEngineHandle;
  const inference = async (url: string, format: string, withFile = true) => {
    const form = new FormData();
    if (withFile) form.append('file', new Blob([wavFile(1)]), 'a.wav');
    form.append('response_format', format);
    const res = await fetch(`${url}/inference`, { method: 'POST', body: form });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };

  beforeAll(async () => {
    const { whisperServer, whisperModel } = await realEngines();
    const port = await freePort();
    const proc = spawn(whisperServer, ['--host', '127.0.0.1', '--port', String(port), '-m', whisperModel, '-t', '1'], {
      stdio: 'ignore',
    });
    const url = `http://127.0.0.1:${port}`;
    real = {
      url,
      stop: () =>
        new Promise<void>((r) => (proc.exitCode !== null ? r() : (proc.once('exit', () => r()), proc.kill('SIGTERM')))),
    };
    await eventually(async () => (await fetch(`${url}/health`)).status === 200, {
      timeoutMs: 60_000,
      what: 'whisper-server /health 200',
    });
    sim = await startSimEngine({ port: 0, shape: 'whisper-server', load_time: 0, audio_time_per_second: 1 });
    await sim.loaded;
  }, REAL_ENGINES_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([real?.stop(), sim?.close()]);
  });

  it('/health: the same answer once loaded', async () => {
    const [r, s] = await Promise.all([real.url, sim.url].map(async (u) => (await fetch(`${u}/health`)).json()));
    expect(s).toEqual(r);
  });

  it('/inference json and verbose_json: the same fields and kinds, segments and words included', async () => {
    for (const format of ['json', 'verbose_json']) {
      const [r, s] = await Promise.all([inference(real.url, format), inference(sim.url, format)]);
      expect([r.status, s.status]).toEqual([200, 200]);
      const [rb, sb] = [JSON.parse(r.text), JSON.parse(s.text)];
      expect(
        [...shapeProblems(sb, rb).map((p) => `sim ${p}`), ...shapeProblems(rb, sb).map((p) => `real ${p}`)].filter(
          (p) => !p.includes('language_probabilities.'),
        ),
      ).toEqual([]);
    }
  });

  it('a request without a file: the same status, type and text', async () => {
    const [r, s] = await Promise.all([inference(real.url, 'json', false), inference(sim.url, 'json', false)]);
    expect(s.status).toBe(r.status);
    expect(s.text).toBe(r.text);
    expect(s.type?.split(';')[0]).toBe(r.type?.split(';')[0]);
  });
});

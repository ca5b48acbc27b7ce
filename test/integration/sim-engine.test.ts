import { once } from 'node:events';
import { type IncomingMessage, request } from 'node:http';
import { PassThrough } from 'node:stream';
import { inflateSync } from 'node:zlib';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import {
  encodeWav,
  LOADING_BODY,
  parseSimEngineArgv,
  SimEngineExit,
  type SimEngineHandle,
  type SimEngineOptionsInput,
  simEngineArgv,
  simEngineMain,
  startSimEngine,
} from '../../src-router/engines/sim';
import { crc32 } from '../../src-router/engines/sim/png';

const engines: SimEngineHandle[] = [];
afterAll(async () => {
  await Promise.all(engines.map((e) => e.close()));
});

/** Starts an engine on a free port; crashes are recorded instead of exiting the test process. */
async function start(options: SimEngineOptionsInput, crashes: number[] = []): Promise<SimEngineHandle> {
  const engine = await startSimEngine(
    { port: 0, load_time: 0, token_time: 1, ...options },
    { onCrash: (code) => void crashes.push(code) },
  );
  engines.push(engine);
  await engine.loaded;
  return engine;
}

async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function metrics(engine: SimEngineHandle): Promise<Map<string, number>> {
  const res = await fetch(`${engine.url}/metrics`);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  const map = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    map.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return map;
}

/** A parsed JSON body, loosely typed for assertions. */
type Json = any;
const readJson = async (res: Response | Promise<Response>): Promise<Json> => (await res).json();

const client = (engine: SimEngineHandle) => new OpenAI({ baseURL: `${engine.url}/v1`, apiKey: 'sim', maxRetries: 0 });
const post = (engine: SimEngineHandle, path: string, body: unknown, signal?: AbortSignal) =>
  fetch(`${engine.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
const chatBody = (extra: Record<string, unknown> = {}) => ({
  model: 'm',
  messages: [{ role: 'user', content: 'hello there' }],
  ...extra,
});

function checkPng(b64: string): { width: number; height: number } {
  const png = Buffer.from(b64, 'base64');
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  let offset = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  while (offset < png.length) {
    const len = png.readUInt32BE(offset);
    const type = png.toString('ascii', offset + 4, offset + 8);
    const data = png.subarray(offset + 8, offset + 8 + len);
    expect(png.readUInt32BE(offset + 8 + len)).toBe(crc32(png.subarray(offset + 4, offset + 8 + len)));
    if (type === 'IHDR') [width, height] = [data.readUInt32BE(0), data.readUInt32BE(4)];
    if (type === 'IDAT') idat.push(data);
    offset += 12 + len;
  }
  expect(inflateSync(Buffer.concat(idat)).length).toBe(height * (1 + width * 3));
  return { width, height };
}

describe('sim engine, llama-server shape', () => {
  it('listens first, answers 503 "Loading model" until loaded, then 200', async () => {
    // A load no test outlasts shows the loading state without racing its end; a short one shows the end.
    const loadingEngine = await startSimEngine({ port: 0, load_time: 600_000 });
    engines.push(loadingEngine);
    const loading = await fetch(`${loadingEngine.url}/health`);
    expect(loading.status).toBe(503);
    expect(await loading.json()).toEqual(LOADING_BODY);
    expect((await post(loadingEngine, '/v1/chat/completions', chatBody())).status).toBe(503);
    expect((await readJson(fetch(`${loadingEngine.url}/sim/stats`))).loaded).toBe(false);
    const engine = await startSimEngine({ port: 0, load_time: 50 });
    engines.push(engine);
    await engine.loaded;
    const ready = await fetch(`${engine.url}/health`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok' });
  });

  it('serves chat, completions, embeddings and models to the openai client', async () => {
    const engine = await start({ alias: 'tiny', tokens: 7 });
    const openai = client(engine);

    const chat = await openai.chat.completions.create({
      model: 'asked-for',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 5,
    });
    expect(chat.object).toBe('chat.completion');
    expect(chat.model).toBe('asked-for');
    expect(chat.choices[0].finish_reason).toBe('length');
    expect(chat.choices[0].message.content?.split(' ')).toHaveLength(5);
    expect(chat.usage).toMatchObject({ completion_tokens: 5, total_tokens: chat.usage!.prompt_tokens + 5 });

    const stream = await openai.chat.completions.create({
      model: '',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks).toHaveLength(1 + 7 + 2); // llama-server's role chunk, one per token, the finish chunk, the usage chunk
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: null });
    expect(chunks[8].choices[0].finish_reason).toBe('stop');
    expect(chunks[9].usage?.completion_tokens).toBe(7);
    expect(chunks.every((c) => c.model === 'tiny' && c.object === 'chat.completion.chunk')).toBe(true);

    const completion = await openai.completions.create({ model: 'x', prompt: 'once upon', max_tokens: 3 });
    expect(completion.object).toBe('text_completion');
    expect(completion.choices[0].text.split(' ')).toHaveLength(3);
    const cstream = await openai.completions.create({ model: 'x', prompt: 'once upon', max_tokens: 4, stream: true });
    const texts: string[] = [];
    for await (const c of cstream) texts.push(c.choices[0].text);
    expect(texts).toHaveLength(4 + 1); // one per token, then the finish chunk
    expect(texts.slice(0, 3).join('')).toBe(completion.choices[0].text); // same prompt, same tokens

    const emb = await openai.embeddings.create({ model: 'e', input: ['alpha', 'beta'] });
    expect(emb.data).toHaveLength(2);
    expect(emb.data[0].embedding).toHaveLength(8);
    expect(Math.hypot(...emb.data[0].embedding)).toBeCloseTo(1, 5);
    const again = await openai.embeddings.create({ model: 'e', input: 'alpha', encoding_format: 'float' });
    again.data[0].embedding.forEach((v, i) => expect(v).toBeCloseTo(emb.data[0].embedding[i], 5));
    expect(emb.data[1].embedding).not.toEqual(emb.data[0].embedding);

    const models = await openai.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['tiny']);
  });

  it('writes SSE exactly: data: {json}\\n\\n per chunk, then data: [DONE]', async () => {
    const engine = await start({});
    const text = await (await post(engine, '/v1/chat/completions', chatBody({ stream: true, max_tokens: 3 }))).text();
    const events = text.split('\n\n');
    expect(events.pop()).toBe('');
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(events).toHaveLength(1 + 3 + 2); // the role chunk, one per token, the finish chunk, [DONE]
    for (const e of events.slice(0, -1)) expect(JSON.parse(e.slice('data: '.length)).id).toMatch(/^chatcmpl-/);
  });

  it('reads JSON whatever the content type, answers unknown paths with an OpenAI 404, speaks vllm too', async () => {
    const engine = await start({ shape: 'vllm', alias: 'v' });
    const res = await fetch(`${engine.url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ prompt: 'p', max_tokens: 2 }),
    });
    expect((await readJson(res)).usage.completion_tokens).toBe(2);
    const missing = await fetch(`${engine.url}/nope`);
    expect(missing.status).toBe(404);
    expect((await readJson(missing)).error.code).toBe(404);
    expect((await readJson(fetch(`${engine.url}/v1/models`))).data[0]).toMatchObject({ id: 'v', owned_by: 'vllm' });
  });

  it('queues FIFO beyond parallel slots and reports it in /metrics', async () => {
    const engine = await start({ parallel: 1, kv_pages: 64 });
    const done: number[] = [];
    const send = (i: number) =>
      post(engine, '/v1/completions', { prompt: 'x'.repeat(200), max_tokens: 10, sim_token_time: 30 }).then(
        async (r) => {
          await r.json();
          done.push(i);
        },
      );
    const first = send(0);
    await waitFor(async () => (await metrics(engine)).get('clutch_active_slots') === 1, 'first request active');
    const m1 = await metrics(engine);
    expect(m1.get('clutch_kv_pages_used')).toBeGreaterThan(0);
    expect(m1.get('clutch_kv_pages_used')! + m1.get('clutch_kv_pages_free')!).toBe(64);
    const second = send(1);
    await waitFor(async () => (await metrics(engine)).get('clutch_queue_depth') === 1, 'one queued');
    const third = send(2);
    await waitFor(async () => (await metrics(engine)).get('clutch_queue_depth') === 2, 'two queued');
    await Promise.all([first, second, third]);
    expect(done).toEqual([0, 1, 2]);
    const m = await metrics(engine);
    expect(m.get('clutch_queue_depth')).toBe(0);
    expect(m.get('clutch_active_slots')).toBe(0);
    expect(m.get('clutch_kv_pages_used')).toBe(0);
    expect(m.get('clutch_queue_wait_seconds_count')).toBe(3);
    expect(m.get('clutch_queue_wait_seconds_sum')).toBeGreaterThan(0.3); // the 2nd waited ≥ 300 ms, the 3rd ≥ 600 ms
    expect(m.get('clutch_queue_wait_seconds_bucket{le="+Inf"}')).toBe(3);
    expect(m.get('sim_requests_total')).toBe(3);
    expect(m.get('sim_completed_total')).toBe(3);
  });

  it('counts a client disconnect as cancelled and frees the slot at once (running and queued)', async () => {
    const engine = await start({ parallel: 1 });
    // The running stream over node:http, so leaving is one socket destroy (a fetch abort mid-body may leave the
    // socket open a while, and the engine cannot see a client that has not gone).
    const running = request(`${engine.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    running.on('error', () => undefined);
    running.end(JSON.stringify(chatBody({ stream: true, max_tokens: 1000, sim_token_time: 20 })));
    const [res1] = (await once(running, 'response')) as [IncomingMessage];
    await once(res1, 'data'); // the first token arrived
    const queued = new AbortController();
    const r2 = post(engine, '/v1/chat/completions', chatBody({ sim_token_time: 20 }), queued.signal).catch(
      () => undefined,
    );
    await waitFor(() => engine.stats().queued === 1 || undefined, 'second request queued');
    queued.abort();
    await r2;
    await waitFor(() => engine.stats().cancelled === 1 || undefined, 'queued request cancelled');
    running.destroy();
    await waitFor(() => engine.stats().cancelled === 2 || undefined, 'running request cancelled');
    expect(engine.stats()).toMatchObject({ active: 0, queued: 0, completed: 0, requests: 2 });
    expect((await metrics(engine)).get('sim_cancelled_total')).toBe(2);
    // The slot is free: a new request runs right away.
    expect((await post(engine, '/v1/chat/completions', chatBody({ max_tokens: 1 }))).status).toBe(200);
  });

  it('divides every duration by time_scale', async () => {
    const engine = await start({ token_time: 200, time_scale: 20 });
    const t0 = performance.now();
    await post(engine, '/v1/completions', { prompt: 'p', max_tokens: 10 }).then((r) => r.json());
    expect(performance.now() - t0).toBeGreaterThanOrEqual(90); // 10 × 200 ms / 20
  });
});

describe('sim engine failure injection', () => {
  it('fail http_500: every generation request gets an OpenAI-shaped 500', async () => {
    const engine = await start({ fail: 'http_500' });
    const err = await client(engine)
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
    const res = await post(engine, '/v1/embeddings', { input: 'x' });
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ error: { code: 500, type: 'server_error' } });
    expect(engine.stats()).toMatchObject({ requests: 2, failed: 2 });
    expect((await metrics(engine)).get('sim_failed_total')).toBe(2);
  });

  it('sim_fail http_500 and hang fail one request on an engine that otherwise works', async () => {
    const engine = await start({ parallel: 2 });
    const bad = await post(engine, '/v1/completions', { prompt: 'p', sim_fail: 'http_500' });
    expect(bad.status).toBe(500);
    expect((await readJson(bad)).error.code).toBe(500);
    const hang = new AbortController();
    const hung = post(engine, '/v1/completions', { prompt: 'p', sim_fail: 'hang' }, hang.signal).catch((e: Error) => e);
    await waitFor(() => engine.stats().active === 1 || undefined, 'hanging request active');
    expect((await post(engine, '/v1/completions', { prompt: 'p' })).status).toBe(200);
    hang.abort();
    expect(await hung).toBeInstanceOf(Error);
    await waitFor(() => engine.stats().cancelled === 1 || undefined, 'hung request cancelled');
    expect(engine.stats()).toMatchObject({ requests: 3, failed: 1, completed: 1, active: 0 });
  });

  it('sim_fail crash: a stream gets its first token, then the engine dies (exit 3)', async () => {
    const crashes: number[] = [];
    const engine = await start({}, crashes);
    const stream = await client(engine).chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
      sim_fail: 'crash',
    } as never);
    const got: unknown[] = [];
    const err = await (async () => {
      for await (const c of stream as unknown as AsyncIterable<unknown>) got.push(c);
    })().catch((e: unknown) => e);
    expect(got).toHaveLength(2); // the role chunk and the first token
    expect(err).toBeInstanceOf(Error);
    expect(crashes).toEqual([3]);
    await waitFor(
      () =>
        fetch(`${engine.url}/health`).then(
          () => false,
          () => true,
        ),
      'engine gone',
    );
  });

  it('fail crash_on_request: a non-stream request dies mid-request', async () => {
    const crashes: number[] = [];
    const engine = await start({ fail: 'crash_on_request' }, crashes);
    const err = await post(engine, '/v1/completions', { prompt: 'p', max_tokens: 4 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(crashes).toEqual([3]);
  });

  it('fail slow_health: health stays 503 for 20 × load_time', async () => {
    const engine = await startSimEngine({ port: 0, load_time: 20, fail: 'slow_health' });
    engines.push(engine);
    const t0 = performance.now();
    await waitFor(async () => (await fetch(`${engine.url}/health`)).status === 200, 'slow health');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(350);
  });
});

describe('sim engine, image and audio shapes', () => {
  it('sd-server: /v1/images/generations returns real PNGs of the asked size', async () => {
    const engine = await start({ shape: 'sd-server', step_time: 10 });
    expect((await fetch(`${engine.url}/health`)).status).toBe(200);
    const t0 = performance.now();
    const images = await client(engine).images.generate({
      model: 'sd',
      prompt: 'a cat',
      n: 2,
      size: '64x32',
      steps: 5,
    } as never);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(95); // 2 images × 5 steps × 10 ms
    expect(images.data).toHaveLength(2);
    expect(checkPng(images.data![0].b64_json!)).toEqual({ width: 64, height: 32 });
    const res = await post(engine, '/v1/images/generations', { prompt: 'x', steps: 1 });
    expect(checkPng((await readJson(res)).data[0].b64_json)).toEqual({ width: 512, height: 512 });
    expect((await post(engine, '/v1/images/generations', { prompt: 'x', size: 'big' })).status).toBe(400);
  });

  it('whisper-server: /inference reads the WAV length and answers json, verbose_json and text', async () => {
    const engine = await start({ shape: 'whisper-server', audio_time_per_second: 1000, time_scale: 50 });
    const form = (format: string, file: Blob, name = 'a.wav') => {
      const f = new FormData();
      f.append('file', file, name);
      f.append('response_format', format);
      f.append('language', 'de');
      f.append('temperature', '0.0');
      return f;
    };
    const wav = new Blob([encodeWav(3)], { type: 'audio/wav' });
    const t0 = performance.now();
    const json = await readJson(fetch(`${engine.url}/inference`, { method: 'POST', body: form('json', wav) }));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(55); // 3 s × 1000 ms / 50
    expect(Object.keys(json)).toEqual(['text']);
    expect(json.text.length).toBeGreaterThan(0);
    const verbose = await readJson(
      fetch(`${engine.url}/inference`, { method: 'POST', body: form('verbose_json', wav) }),
    );
    expect(verbose).toMatchObject({ duration: 3, language: 'german', text: json.text }); // named in full, as whisper-server does
    expect(verbose.segments[0]).toMatchObject({ id: 0, start: 0, end: 3 });
    const text = await fetch(`${engine.url}/inference`, { method: 'POST', body: form('text', wav) });
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
    expect((await text.text()).trim()).toBe(json.text);
    const raw = await readJson(
      fetch(`${engine.url}/inference`, {
        method: 'POST',
        body: form('verbose_json', new Blob([new Uint8Array(64_000)]), 'a.mp3'),
      }),
    );
    expect(raw.duration).toBe(2); // bytes / 32000
    expect((await fetch(`${engine.url}/inference`, { method: 'POST', body: new FormData() })).status).toBe(400);
  });
});

describe('sim engine, koboldcpp shape', () => {
  it('serves every lane from one process, version check 503 while loading', async () => {
    const loading = await startSimEngine({ port: 0, shape: 'koboldcpp', alias: 'kob', load_time: 600_000 });
    engines.push(loading);
    expect((await fetch(`${loading.url}/api/extra/version`)).status).toBe(503);
    const engine = await startSimEngine({ port: 0, shape: 'koboldcpp', alias: 'kob', load_time: 50, token_time: 1 });
    engines.push(engine);
    await engine.loaded;
    expect(await (await fetch(`${engine.url}/api/extra/version`)).json()).toEqual({
      result: 'KoboldCpp',
      version: '1.80.sim',
      txt2img: true,
      transcribe: true,
      embeddings: true,
    });
    expect(await (await fetch(`${engine.url}/api/v1/model`)).json()).toEqual({ result: 'koboldcpp/kob' });

    const chat = await client(engine).chat.completions.create({
      model: 'kob',
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 2,
    });
    expect(chat.choices[0].message.content?.split(' ')).toHaveLength(2);
    const emb = await client(engine).embeddings.create({ model: 'kob', input: 'x' });
    expect(emb.data[0].embedding).toHaveLength(8);

    const img = await readJson(post(engine, '/sdapi/v1/txt2img', { prompt: 'a dog', width: 48, height: 16, steps: 2 }));
    expect(img.images).toHaveLength(1);
    expect(checkPng(img.images[0])).toEqual({ width: 48, height: 16 });

    const form = new FormData();
    form.append('file', new Blob([encodeWav(1.5)]), 'speech.wav');
    form.append('model', 'whisper');
    form.append('response_format', 'json');
    const stt = await fetch(`${engine.url}/v1/audio/transcriptions`, { method: 'POST', body: form });
    expect(stt.status).toBe(200);
    expect(typeof (await readJson(stt)).text).toBe('string');

    const m = await metrics(engine);
    for (const name of [
      'clutch_active_slots',
      'clutch_queue_depth',
      'clutch_kv_pages_used',
      'clutch_kv_pages_free',
      'clutch_queue_wait_seconds_count',
      'sim_requests_total',
      'sim_completed_total',
      'sim_cancelled_total',
      'sim_failed_total',
    ]) {
      expect(m.has(name), name).toBe(true);
    }
    expect(m.get('sim_completed_total')).toBe(4);
    const stats = await readJson(fetch(`${engine.url}/sim/stats`));
    expect(stats).toEqual({
      pid: process.pid,
      shape: 'koboldcpp',
      alias: 'kob',
      loaded: true,
      requests: 4,
      completed: 4,
      cancelled: 0,
      failed: 0,
      active: 0,
      queued: 0,
    });
  });
});

describe('sim-engine command line', () => {
  const io = () => {
    const out = { stdout: '', stderr: '', exits: [] as number[] };
    return {
      out,
      io: {
        stdout: { write: (s: string) => (out.stdout += s) },
        stderr: { write: (s: string) => (out.stderr += s) },
        exit: (code: number) => void out.exits.push(code),
        handleSignals: false,
      },
    };
  };

  it('parses flags like the model config, and simEngineArgv round-trips', () => {
    const options = parseSimEngineArgv([
      '--shape',
      'sd-server',
      '--alias',
      'a',
      '--load-time',
      '2s',
      '--token-time',
      '7',
      '--time-scale',
      '10',
      '--fail',
      'http_500',
      '--exit-with-stdin',
    ]);
    expect(options).toMatchObject({
      shape: 'sd-server',
      alias: 'a',
      load_time: 2000,
      token_time: 7,
      time_scale: 10,
      fail: 'http_500',
      exit_with_stdin: true,
      parallel: 1,
      kv_pages: 256,
    });
    expect(parseSimEngineArgv(simEngineArgv(options as never))).toEqual(options);
  });

  it('runs for real: prints the listening line, serves, closes', async () => {
    const { out, io: sys } = io();
    const handle = await simEngineMain(
      ['--port', '0', '--shape', 'whisper-server', '--alias', 'w1', '--load-time', '0'],
      sys,
    );
    expect(out.stdout).toBe(`sim-engine listening on http://127.0.0.1:${handle.port} (whisper-server, w1)\n`);
    await waitFor(async () => (await fetch(`${handle.url}/health`)).status === 200, 'health');
    await handle.close();
    await expect(fetch(`${handle.url}/health`)).rejects.toThrow();
    expect(out.exits).toEqual([]);
  });

  it('exits 0 when stdin ends with --exit-with-stdin', async () => {
    const { out, io: sys } = io();
    const stdin = new PassThrough();
    const handle = await simEngineMain(['--exit-with-stdin', '--load-time', '0'], { ...sys, stdin });
    stdin.end();
    await waitFor(() => out.exits.length > 0 || undefined, 'exit');
    expect(out.exits).toEqual([0]);
    await expect(fetch(`${handle.url}/health`)).rejects.toThrow();
  });

  it('bad flags exit 2 with a clear message; crash_on_start exits 1 before listening', async () => {
    for (const argv of [['--port', 'abc'], ['--shape', 'nope'], ['--bogus'], ['--load-time', 'soon']]) {
      const { out, io: sys } = io();
      await expect(simEngineMain(argv, sys)).rejects.toBeInstanceOf(SimEngineExit);
      expect(out.exits).toEqual([2]);
      expect(out.stderr).toMatch(/^sim-engine: /);
    }
    const { out, io: sys } = io();
    await expect(simEngineMain(['--fail', 'crash_on_start'], sys)).rejects.toMatchObject({ exitCode: 1 });
    expect(out.stderr).toMatch(/crash on start/);
    expect(out.stdout).toBe('');
  });
});

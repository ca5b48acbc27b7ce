// Image input at the sim engine (issue #10, Engines): a multimodal sim model answers image parts, a text-only one
// refuses them exactly as a llama-server without a projector does, and a sim can be told to refuse with 400 or 500.
// In-process engines for the option matrix; engine processes launched from model configs for the adapter's part.
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends/free-port';
import { parseModelConfig } from '../../src-router/config';
import { adapterFor } from '../../src-router/engines';
import {
  IMAGE_NOT_SUPPORTED_MESSAGE,
  imageRefusalBody,
  parseSimEngineArgv,
  type SimEngineHandle,
  type SimEngineOptionsInput,
  startSimEngine,
} from '../../src-router/engines/sim';
import { referenceJson } from '../support/llama-server-reference';
import { CLI } from '../support/node-harness';

const engines: SimEngineHandle[] = [];
const procs: ChildProcess[] = [];
afterAll(async () => {
  await Promise.all(engines.map((e) => e.close()));
  await Promise.all(
    procs.map(async (p) => {
      if (p.exitCode !== null || p.signalCode !== null) return;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await exited;
    }),
  );
});

async function start(options: SimEngineOptionsInput): Promise<SimEngineHandle> {
  const engine = await startSimEngine({ port: 0, load_time: 0, token_time: 1, ...options });
  engines.push(engine);
  await engine.loaded;
  return engine;
}

const PNG = 'data:image/png;base64,iVBORw0KGgo=';
/** Every shape of image input `hasImageInput` knows, as chat bodies. */
const IMAGE_BODIES = [
  {
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is it' },
          { type: 'image_url', image_url: { url: PNG } },
        ],
      },
    ],
  },
  { messages: [{ role: 'user', content: [{ type: 'input_image', image_url: PNG }] }] },
  { messages: [{ role: 'user', content: [{ type: 'image', image: PNG }] }] },
  { messages: [{ role: 'user', content: 'what is it', images: ['iVBORw0KGgo='] }] },
];
const TEXT_BODY = { messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }], max_tokens: 3 };

const chat = async (url: string, body: unknown) => {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

describe('sim engine: image input by capability and option', () => {
  it('a text-only sim (no --vision) refuses every image shape with llama-server’s exact 500, and answers text', async () => {
    const engine = await start({});
    const reference = referenceJson('image-refused.json');
    for (const body of IMAGE_BODIES) expect(await chat(engine.url, body)).toEqual({ status: 500, body: reference });
    expect(imageRefusalBody(500)).toEqual(reference);
    const text = await chat(engine.url, TEXT_BODY);
    expect(text.status).toBe(200);
    expect(text.body.choices[0].message.content.split(' ')).toHaveLength(3);
    expect(engine.stats()).toMatchObject({ requests: 5, failed: 4, completed: 1 });
  });

  it('a multimodal sim (--vision) answers image parts like any chat, streamed too', async () => {
    const engine = await start({ vision: true });
    for (const body of IMAGE_BODIES) {
      const r = await chat(engine.url, { ...body, max_tokens: 2 });
      expect(r.status).toBe(200);
      expect(r.body.choices[0].message.content.split(' ')).toHaveLength(2);
    }
    const res = await fetch(`${engine.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ ...IMAGE_BODIES[0], stream: true, max_tokens: 2 }),
    });
    expect(res.status).toBe(200);
    expect((await res.text()).trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('image_refusal 400: the same refusal as a client error, on a text-only sim and with fail image_not_supported', async () => {
    const textOnly = await start({ image_refusal: 400 });
    const refusing = await start({ vision: true, fail: 'image_not_supported', image_refusal: 400 });
    for (const engine of [textOnly, refusing]) {
      const r = await chat(engine.url, IMAGE_BODIES[0]);
      expect(r).toEqual({
        status: 400,
        body: { error: { code: 400, message: IMAGE_NOT_SUPPORTED_MESSAGE, type: 'invalid_request_error' } },
      });
      expect(r.body.error.message).toMatch(/not supported/);
      expect((await chat(engine.url, TEXT_BODY)).status).toBe(200);
    }
  });

  it('fail image_not_supported refuses images even on a multimodal sim (500 by default)', async () => {
    const engine = await start({ vision: true, fail: 'image_not_supported' });
    expect(await chat(engine.url, IMAGE_BODIES[1])).toEqual({ status: 500, body: referenceJson('image-refused.json') });
    expect((await chat(engine.url, TEXT_BODY)).status).toBe(200);
  });

  it('--image-refusal takes 400 or 500 only; --vision is a flag', () => {
    expect(parseSimEngineArgv(['--vision', '--image-refusal', '400'])).toMatchObject({
      vision: true,
      image_refusal: 400,
    });
    expect(() => parseSimEngineArgv(['--image-refusal', '404'])).toThrow(/--image-refusal: must be 400 or 500/);
    expect(() =>
      parseModelConfig({ name: 'm', backend: 'sim', sim: { image_refusal: 418 } }, 'm.yaml', '/models'),
    ).toThrow(/image_refusal/);
  });
});

/** Spawns the engine a model config launches (the adapter's own command line) and waits for its health. */
async function launch(raw: Record<string, unknown>): Promise<string> {
  const config = parseModelConfig(
    { name: 'm', backend: 'sim', ...raw, sim: { load_time: '0ms', token_time: '1ms', ...(raw.sim as object) } },
    'm.yaml',
    '/models',
  );
  const port = await freePort();
  const spec = adapterFor(config, 'llama_sdcpp').launch(config, {
    host: '127.0.0.1',
    port,
    localId: 'm-local',
    cli: { node: process.execPath, script: CLI },
  });
  const proc = spawn(spec.command, spec.args, {
    env: { ...process.env, ...spec.env },
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  procs.push(proc);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`engine exited with ${proc.exitCode}`);
    if (Date.now() > deadline) throw new Error(`engine at ${url} not healthy after 15 s`);
    const ok = await fetch(`${url}/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return url;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('sim engine launched from a model config: the capabilities decide', () => {
  it('multimodal answers images; text-only refuses with llama-server’s 500; sim.image_refusal reaches the engine', async () => {
    const [vision, text, text400] = await Promise.all([
      launch({ capabilities: ['text', 'multimodal'] }),
      launch({ capabilities: ['text'] }),
      launch({ capabilities: ['text'], sim: { image_refusal: 400 } }),
    ]);
    expect((await chat(vision, IMAGE_BODIES[0])).status).toBe(200);
    expect(await chat(text, IMAGE_BODIES[0])).toEqual({ status: 500, body: referenceJson('image-refused.json') });
    expect((await chat(text400, IMAGE_BODIES[0])).status).toBe(400);
    const props = async (url: string) => (await (await fetch(`${url}/props`)).json()) as any;
    expect((await props(vision)).modalities).toEqual({ vision: true, video: false, audio: false });
    expect((await props(text)).modalities).toEqual({ vision: false, video: false, audio: false });
  });
});

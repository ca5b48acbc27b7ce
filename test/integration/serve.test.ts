import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Ollama } from 'ollama';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import { CLI, pidAlive, tempDir, wavFile } from '../support/node-harness';
import { REAL_ENGINES_TIMEOUT_MS, realWhisperServer } from '../support/real-engines';

// The README's first command: `npm run serve` is `routerdesk serve` on the embedded defaults. This starts it for real
// and checks what the issue promises: chat (streamed and not) and embeddings from the real llama.cpp engine,
// an image from the sim engine, a transcription from the real whisper-server (built by `routerdesk engines build`, on
// the tiny model serve generates), public model IDs everywhere, from the openai and ollama clients.
describe('routerdesk serve', () => {
  let proc: ChildProcess;
  let out = '';
  let url = '';
  let link = '';
  const dir = tempDir('routerdesk-serve-');
  let whisperServer = '';

  beforeAll(async () => {
    whisperServer = (await realWhisperServer()).whisperServer;
    const port = await freePort();
    proc = spawn(process.execPath, [CLI, 'serve', '--dir', dir, '--port', String(port), '--no-open'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ROUTERDESK_LOG_LEVEL: 'warn' },
    });
    proc.stdout!.on('data', (d) => (out += d));
    proc.stderr!.on('data', (d) => (out += d));
    link = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 30_000);
      proc.stdout!.on('data', () => {
        const m = /UI:\s+(http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      proc.on('exit', (code) => reject(new Error(`serve exited ${code}:\n${out}`)));
    });
    url = new URL(link).origin;
  }, REAL_ENGINES_TIMEOUT_MS);

  afterAll(async () => {
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGINT');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes the embedded defaults: a generated GGUF and whisper model, model configs, a node config, a store', () => {
    expect(
      readFileSync(join(dir, 'weights', 'tiny-chat.gguf'))
        .subarray(0, 4)
        .toString(),
    ).toBe('GGUF');
    expect(readFileSync(join(dir, 'weights', 'tiny-whisper.bin')).readUInt32LE(0)).toBe(0x67676d6c);
    expect(existsSync(join(dir, 'models', 'tiny-chat.yaml'))).toBe(true);
    // whisper-server is built, so it takes the sim's place for transcription, and serve says so.
    expect(readFileSync(join(dir, 'models', 'tiny-whisper.yaml'), 'utf8')).toMatch(/backend: whisper-server/);
    expect(existsSync(join(dir, 'models', 'sim-whisper.yaml'))).toBe(false);
    expect(out).toContain(`speech:  tiny-whisper on whisper-server ${whisperServer}`);
    expect(readFileSync(join(dir, 'node.yaml'), 'utf8')).toMatch(/role: standalone/);
    expect(existsSync(join(dir, 'store', 'router.db'))).toBe(true);
    expect(link).toMatch(/\/\?code=[\w-]{20,}$/);
  });

  it('serves the UI at the printed URL', async () => {
    const html = await (await fetch(link)).text();
    expect(html).toContain('<div id="root">');
  });

  it('answers the openai client from the real llama.cpp engine: chat, streamed chat, embeddings', async () => {
    const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
    const chat = await openai.chat.completions.create({
      model: 'tiny-chat',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 8,
      temperature: 0,
    });
    expect(chat.model).toBe('tiny-chat');
    expect(chat.usage?.completion_tokens).toBeGreaterThan(0);
    const stream = await openai.chat.completions.create({
      model: 'tiny-chat',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 8,
      stream: true,
    });
    let chunks = 0;
    for await (const c of stream) {
      expect(c.model).toBe('tiny-chat');
      chunks++;
    }
    expect(chunks).toBeGreaterThan(1);
    const emb = await openai.embeddings.create({ model: 'tiny-chat', input: 'hello world' });
    expect(emb.model).toBe('tiny-chat');
    expect(emb.data[0].embedding).toHaveLength(128);
    expect(emb.data[0].embedding.some((x) => x !== 0)).toBe(true);
  });

  it('answers the openai client: an image from the sim engine, a transcription from whisper-server', async () => {
    const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120_000 });
    const img = await openai.images.generate({ model: 'sim-image', prompt: 'a cat', size: '256x256' });
    expect(img.data![0].b64_json!.length).toBeGreaterThan(50);
    const t = await openai.audio.transcriptions.create({
      model: 'tiny-whisper',
      file: await toFile(wavFile(1), 'a.wav'),
    });
    expect(typeof t.text).toBe('string');
  }, 120_000);

  it('answers the ollama client: chat (streamed and not) and embed', async () => {
    const ollama = new Ollama({ host: url });
    const chat = await ollama.chat({
      model: 'tiny-chat',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
      options: { num_predict: 6 },
    });
    expect(chat.model).toBe('tiny-chat');
    expect(chat.done).toBe(true);
    let parts = 0;
    for await (const p of await ollama.chat({
      model: 'tiny-chat',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      options: { num_predict: 6 },
    })) {
      expect(p.model).toBe('tiny-chat');
      parts++;
    }
    expect(parts).toBeGreaterThan(1);
    const emb = await ollama.embed({ model: 'tiny-chat', input: 'hello' });
    expect(emb.embeddings[0]).toHaveLength(128);
  });

  it('stops its engines when it is stopped', async () => {
    // The printed link's one-time code, exchanged for the console token as the page does.
    const session = await fetch(`${url}/router/v1/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: new URL(link).searchParams.get('code') }),
    });
    const { token } = (await session.json()) as { token: string };
    const { lanes } = (await (
      await fetch(`${url}/router/v1/console/lanes`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { lanes: { pid: number | null }[] };
    const pids = lanes.map((l) => l.pid).filter((p): p is number => p !== null);
    expect(pids.length).toBe(3); // text (llama-node), image (sim) and whisper (whisper-server) lanes all ran
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(pids.filter(pidAlive)).toEqual([]);
  });
});

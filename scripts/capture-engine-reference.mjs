#!/usr/bin/env node
// `node scripts/capture-engine-reference.mjs [--llama-server PATH] [--whisper-server PATH]`: regenerates the
// real-engine captures the tests compare the sim engine with (test/support/llama-server-reference/,
// test/support/whisper-server-reference/) from the engines `routerdesk engines build` made (built once, then reused;
// or the binaries named) and the project's own tiny models. Needs `npm run build`.
// The captures are never edited by hand: rerun this after an engine update and review the diff.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'out', 'main', 'cli.js');
const llamaOut = join(root, 'test', 'support', 'llama-server-reference');
const whisperOut = join(root, 'test', 'support', 'whisper-server-reference');
/** The folder the model files are in, as the captures show it (the real one is a fresh temp folder). */
const SHOWN_DIR = '/models';
/** llama-server as the captures were taken: one slot of 512 tokens, metrics, slots, embeddings, the chatml template. */
export const LLAMA_FLAGS = [
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
  '-t',
  '1',
  '-tb',
  '1',
];

const say = (line) => process.stderr.write(`${line}\n`);
const fail = (message) => {
  say(`capture-engine-reference: ${message}`);
  process.exit(1);
};

function cliRun(args) {
  const r = spawnSync(process.execPath, [cli, ...args], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 << 20,
  });
  if (r.status !== 0) fail(`routerdesk ${args.join(' ')} failed (exit ${r.status})`);
  return r.stdout;
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Starts `binary` with `args` plus host and port, waits for /health 200; returns its URL and a stop function. */
async function startEngine(binary, args) {
  const port = await freePort();
  const proc = spawn(binary, ['--host', '127.0.0.1', '--port', String(port), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  const stop = () => new Promise((r) => (proc.exitCode !== null ? r() : (proc.once('exit', r), proc.kill('SIGTERM'))));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) fail(`${binary} exited with ${proc.exitCode}:\n${out}`);
    const ok = await fetch(`${url}/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { url, stop };
    if (Date.now() > deadline) {
      await stop();
      fail(`${binary} did not become healthy:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A 16 kHz mono 16-bit PCM WAV of `seconds` of a quiet tone (the same bytes every run). */
export function toneWav(seconds) {
  const rate = 16000;
  const n = Math.round(seconds * rate);
  const data = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) data.writeInt16LE(Math.round(3000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

const post = (url, body) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function captureLlama(binary, dir) {
  const gguf = join(dir, 'tiny-chat.gguf');
  cliRun(['make-model', gguf, '--embd', '64', '--layers', '2', '--seed', '1', '--ctx', '512']);
  const engine = await startEngine(binary, ['-m', gguf, ...LLAMA_FLAGS]);
  const shown = (text) => text.replaceAll(dir, SHOWN_DIR);
  const files = {};
  try {
    // A slot before it ran any task, and (below) after.
    files['slots.json'] = await (await fetch(`${engine.url}/slots`)).text();
    // A whole answer: the first seed whose random text passes the engine's parse against the template's format.
    for (let seed = 1; seed <= 200 && !files['chat.json']; seed++) {
      const chat = await post(`${engine.url}/v1/chat/completions`, {
        messages: [{ role: 'user', content: 'hello' }],
        max_tokens: 8,
        seed,
      });
      if (chat.status === 200) files['chat.json'] = await chat.text();
    }
    if (!files['chat.json']) fail('no seed in 1..200 gave a whole chat answer');
    // A stream of content deltas that ends in the engine's in-band error (random text failing the template's format):
    // the relay's tests need both. The first seed whose stream has at least two deltas before an error.
    let stream = '';
    for (let seed = 1; seed <= 200 && !stream; seed++) {
      const text = await (
        await post(`${engine.url}/v1/chat/completions`, {
          messages: [{ role: 'user', content: 'hello' }],
          max_tokens: 16,
          seed,
          stream: true,
        })
      ).text();
      const events = text.split('\n').filter((l) => l.startsWith('data: '));
      const deltas = events.filter((l) => l.includes('"content":"')).length;
      if (deltas >= 2 && events.at(-1).includes('"error"')) stream = text;
    }
    if (!stream) fail('no seed in 1..200 gave a stream with deltas and then an in-band error');
    files['chat-stream.txt'] = stream;
    const image = await post(`${engine.url}/v1/chat/completions`, {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
      max_tokens: 4,
    });
    files['image-refused.json'] = await image.text();
    files['embeddings.json'] = await (await post(`${engine.url}/v1/embeddings`, { input: 'hello' })).text();
    files['props.json'] = await (await fetch(`${engine.url}/props`)).text();
    files['slots-after-task.json'] = await (await fetch(`${engine.url}/slots`)).text();
    files['metrics.txt'] = await (await fetch(`${engine.url}/metrics`)).text();
  } finally {
    await engine.stop();
  }
  mkdirSync(llamaOut, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(llamaOut, name), shown(text));
  say(`llama-server: ${Object.keys(files).join(', ')} → ${llamaOut}`);
}

async function captureWhisper(binary, dir) {
  const model = join(dir, 'tiny-whisper.bin');
  cliRun(['make-whisper-model', model, '--seed', '1']);
  const engine = await startEngine(binary, ['-m', model, '-t', '1']);
  const files = {};
  const inference = async (format) => {
    const form = new FormData();
    form.append('file', new Blob([toneWav(1)]), 'tone.wav');
    form.append('response_format', format);
    form.append('temperature', '0');
    const res = await fetch(`${engine.url}/inference`, { method: 'POST', body: form });
    return res.text();
  };
  try {
    files['health.json'] = await (await fetch(`${engine.url}/health`)).text();
    files['inference-json.json'] = await inference('json');
    files['inference-verbose.json'] = await inference('verbose_json');
    files['inference-text.txt'] = await inference('text');
    files['no-file.txt'] = await (
      await fetch(`${engine.url}/inference`, { method: 'POST', body: new FormData() })
    ).text();
  } finally {
    await engine.stop();
  }
  mkdirSync(whisperOut, { recursive: true });
  for (const [name, text] of Object.entries(files))
    writeFileSync(join(whisperOut, name), text.replaceAll(dir, SHOWN_DIR));
  say(`whisper-server: ${Object.keys(files).join(', ')} → ${whisperOut}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!existsSync(cli)) fail(`${cli} is missing: run \`npm run build\` first`);
  const { values } = parseArgs({
    options: { 'llama-server': { type: 'string' }, 'whisper-server': { type: 'string' } },
  });
  const given = { 'llama-server': values['llama-server'], 'whisper-server': values['whisper-server'] };
  const builds =
    given['llama-server'] && given['whisper-server'] ? [] : JSON.parse(cliRun(['engines', 'build', '--json'])).builds;
  const binary = (engine) =>
    given[engine] ?? builds.find((b) => b.engine === engine)?.binary ?? fail(`engines build reported no ${engine}`);
  const dir = mkdtempSync(join(tmpdir(), 'routerdesk-capture-'));
  try {
    await captureLlama(binary('llama-server'), dir);
    await captureWhisper(binary('whisper-server'), dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../../src-router/backends';
import type { ModelConfigInput } from '../../src-router/config';
import { writeTinyLlamaGguf } from '../../src-router/engines/llama-node/gguf-writer';
import { buildTinyVocab, TokenType } from '../../src-router/engines/llama-node/tiny-vocab';
import { eventually } from './node-harness';
import { realEngines } from './real-engines';

/** A tiny GGUF with seeded random weights (what `routerdesk make-model` writes) in `dir`; `embd` and `layers` set its size. */
export async function tinyGguf(
  dir: string,
  name: string,
  opts: { embd?: number; layers?: number; seed?: number; ctx?: number } = {},
): Promise<string> {
  const file = join(dir, `${name}.gguf`);
  await writeTinyLlamaGguf(file, {
    embd: opts.embd ?? 64,
    layers: opts.layers ?? 2,
    type: 'f32',
    seed: opts.seed ?? 1,
    ctx: opts.ctx ?? 1024,
  });
  return file;
}

/**
 * llama-server flags that keep the tiny model's random text well-formed: its 256 byte tokens banned (`--logit-bias
 * ID-inf`). Random byte tokens form invalid UTF-8, and llama-server parses every answer against the chat template's
 * format (500 "does not match the expected … format") on /v1/chat/completions and /v1/completions alike; whole word
 * pieces always parse. Tests that need a successful answer run with these; the one that pins the error runs without.
 */
export const WELL_FORMED_FLAGS: readonly string[] = (() => {
  const { types } = buildTinyVocab();
  return types.flatMap((t, id) => (t === TokenType.byte ? ['--logit-bias', `${id}-inf`] : []));
})();

/** One thread, no warm-up run: the machine running the tests has few cores. */
const SMALL = ['-t', '1', '-tb', '1', '--no-warmup'];

/**
 * A model config running the real llama-server with the node's default flags (`--metrics --slots --jinja`), one
 * thread, `extra` flags, and (unless `wellFormed: false`) the byte-token ban of WELL_FORMED_FLAGS.
 */
export async function llamaServerModel(
  name: string,
  gguf: string,
  opts: {
    ctx?: number;
    parallel?: number;
    wellFormed?: boolean;
    extra?: string[];
    capabilities?: ModelConfigInput['capabilities'];
  } = {},
): Promise<ModelConfigInput> {
  const { llamaServer } = await realEngines();
  const flags = [
    '--metrics',
    '--slots',
    '--jinja',
    ...SMALL,
    ...(opts.wellFormed === false ? [] : WELL_FORMED_FLAGS),
    ...(opts.extra ?? []),
  ];
  return {
    name,
    backend: 'llama-server',
    capabilities: opts.capabilities ?? ['text'],
    model: gguf,
    contextsize: opts.ctx ?? 1024,
    parallel: opts.parallel ?? 1,
    command: `'${llamaServer}' --host \${HOST} --port \${PORT} -m \${MODEL} --alias \${ALIAS} -c \${CONTEXTSIZE} -np \${PARALLEL} ${flags.join(' ')}`,
  };
}

export interface LlamaServerProcess {
  url: string;
  proc: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/** Starts the real llama-server on a free loopback port with `args` (one thread) and waits until /health answers 200. */
export async function startLlamaServer(gguf: string, args: readonly string[] = []): Promise<LlamaServerProcess> {
  const { llamaServer } = await realEngines();
  const port = await freePort();
  const proc = spawn(llamaServer, ['--host', '127.0.0.1', '--port', String(port), '-m', gguf, ...SMALL, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(t);
  };
  try {
    await eventually(
      async () => {
        if (proc.exitCode !== null) throw new Error(`llama-server exited with ${proc.exitCode}:\n${out}`);
        return (await fetch(`${url}/health`)).status === 200;
      },
      { timeoutMs: 60_000, what: 'llama-server /health 200' },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, proc, output: () => out, stop };
}

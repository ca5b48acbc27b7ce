import { type ChildProcess, execFileSync, type SpawnOptions, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { ModelConfigInput, NodeConfigInput } from '../../src-router/config';

export const ROOT = new URL('../..', import.meta.url).pathname;
export const CLI = join(ROOT, 'out', 'main', 'cli.js');
export const TEST_CONSOLE_TOKEN = 'test-console-token-0123456789';

export interface TestNode {
  url: string;
  dir: string;
  token: string;
  proc: ChildProcess;
  output: () => string;
  /** Console API GET with the console token. */
  console<T = unknown>(path: string): Promise<T>;
  stop(): Promise<void>;
}

export function tempDir(prefix = 'routerdesk-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Runs the CLI to completion; resolves with its exit code and output. */
export function runCli(
  args: string[],
  opts: { timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`routerdesk ${args.join(' ')} did not finish: ${stdout}${stderr}`));
    }, opts.timeoutMs ?? 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Starts a real router node process (`routerdesk node --config …`) in a temp folder with the given model configs.
 * Port 0 lets the node pick; the URL is read from its start-up line.
 */
export async function startNode(opts: {
  models: Record<string, ModelConfigInput>;
  config?: NodeConfigInput;
  dir?: string;
  env?: Record<string, string>;
  /** Starts `node <args>` some other way (inside a network host's namespace); default: a child of this process. */
  launch?: (args: string[], options: SpawnOptions) => ChildProcess;
  /** Runs the node as this user (the folder is handed to it): file permissions then apply to it, unlike to root. */
  user?: { uid: number; gid: number };
}): Promise<TestNode> {
  const dir = opts.dir ?? tempDir();
  const modelsDir = join(dir, 'models');
  mkdirSync(modelsDir, { recursive: true });
  for (const [file, cfg] of Object.entries(opts.models)) writeFileSync(join(modelsDir, `${file}.yaml`), stringify(cfg));
  const config: NodeConfigInput = {
    ...opts.config,
    server: { host: '127.0.0.1', port: 0, ...opts.config?.server },
    cluster: { node_id: 'test-node', store_dir: join(dir, 'store'), ...opts.config?.cluster },
    models: { config_dir: modelsDir, ...opts.config?.models },
    console: { token: TEST_CONSOLE_TOKEN, ...opts.config?.console },
  };
  const configFile = join(dir, 'node.yaml');
  writeFileSync(configFile, stringify(config));
  if (opts.user) execFileSync('chown', ['-R', `${opts.user.uid}:${opts.user.gid}`, dir]);
  const options: SpawnOptions = {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...opts.user,
    env: { ...process.env, ROUTERDESK_LOG_LEVEL: 'warn', ...opts.env },
  };
  const args = [CLI, 'node', '--config', configFile];
  const proc = opts.launch ? opts.launch(args, options) : spawn(process.execPath, args, options);
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node did not start:\n${out}`)), 20_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    proc.stdout!.on('data', check);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`node exited with ${code}:\n${out}`));
    });
  });
  const node: TestNode = {
    url,
    dir,
    token: TEST_CONSOLE_TOKEN,
    proc,
    output: () => out,
    async console<T>(path: string) {
      const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` } });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(t);
      }
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return node;
}

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/** Polls `check` until it returns a truthy value or the deadline passes. */
export async function eventually<T>(
  check: () => Promise<T> | T,
  { timeoutMs = 10_000, everyMs = 50, what = 'condition' } = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as Truthy<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A small valid 16 kHz mono 16-bit PCM WAV of `seconds` of silence. */
export function wavFile(seconds: number): Buffer {
  const rate = 16000;
  const data = Buffer.alloc(Math.round(seconds * rate) * 2);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
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

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

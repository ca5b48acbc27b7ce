/**
 * What a benchmark starts, it stops: child processes of the built CLI (nodes, sim engines) on loopback, and temp
 * folders. A scope is closed by its benchmark; the runner also kills whatever is left when it exits or is
 * interrupted (`killAllNow`).
 */
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { ModelConfigInput, NodeConfigInput } from '../config';
import { cliRef } from '../paths';

/** The console token of every node a benchmark starts (loopback only, gone when the benchmark ends). */
export const BENCH_CONSOLE_TOKEN = 'bench-console-token-0123456789';

/** `bench --cpu-prof DIR`: the folder router nodes write their V8 CPU profiles into (unset: none). */
let cpuProfileDir: string | undefined;
export function profileNodesInto(dir: string): void {
  mkdirSync(dir, { recursive: true });
  cpuProfileDir = dir;
}

export interface CliProcess {
  url: string;
  proc: ChildProcess;
  output(): string;
  /** A node's folder (its store is `store/router.db`); absent for other commands. */
  dir?: string;
}

const open = new Set<BenchScope>();

export class BenchScope {
  private readonly children = new Set<ChildProcess>();
  private readonly dirs = new Set<string>();

  constructor() {
    open.add(this);
  }

  /** A process the scope stops with the others (nginx, a Redis). */
  adopt(proc: ChildProcess): void {
    this.children.add(proc);
    proc.once('exit', () => this.children.delete(proc));
  }

  tempDir(prefix = 'routerdesk-bench-'): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.dirs.add(dir);
    return dir;
  }

  /**
   * Runs `routerdesk <args>` from the built CLI and resolves once it prints `listening on <url>`; rejects (and
   * kills it) if it exits or stays silent past `timeoutMs`.
   */
  async startCli(
    args: string[],
    opts: { timeoutMs?: number; env?: Record<string, string>; launch?: Launch } = {},
  ): Promise<CliProcess> {
    const cli = cliRef();
    const profile = cpuProfileDir && args[0] === 'node' ? ['--cpu-prof', '--cpu-prof-dir', cpuProfileDir] : [];
    const options: SpawnOptions = {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...cli.env, ROUTERDESK_LOG_LEVEL: 'warn', ...opts.env },
    };
    const proc = (opts.launch ?? spawn)(cli.node, [...profile, cli.script, ...args], options);
    this.adopt(proc);
    let out = '';
    const keep = (d: Buffer) => {
      out += d.toString();
      if (out.length > 64_000) out = out.slice(-32_000);
    };
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    const url = await new Promise<string>((resolve, reject) => {
      const fail = (why: string) => {
        clearTimeout(timer);
        proc.kill('SIGKILL');
        reject(new Error(`routerdesk ${args[0]} ${why}:\n${out.slice(-4000)}`));
      };
      const timer = setTimeout(() => fail('did not start in time'), opts.timeoutMs ?? 20_000);
      proc.stdout!.on('data', () => {
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      proc.once('exit', (code, signal) => fail(`exited (${code ?? signal})`));
    });
    return { url, proc, output: () => out };
  }

  /** `routerdesk sim-engine --port 0 <args>`. */
  startSim(args: string[]): Promise<CliProcess> {
    return this.startCli(['sim-engine', '--host', '127.0.0.1', '--port', '0', ...args]);
  }

  /**
   * `routerdesk node --config <tmp yaml>` with these model configs, its store in a temp folder, on a loopback port
   * unless `launch` starts it on a network host of its own (then `config.server.host` is that host's address).
   */
  async startNode(
    models: Record<string, ModelConfigInput>,
    config: NodeConfigInput = {},
    launch?: Launch,
    timeoutMs?: number,
  ): Promise<CliProcess> {
    const dir = this.tempDir('routerdesk-bench-node-');
    const modelsDir = join(dir, 'models');
    mkdirSync(modelsDir, { recursive: true });
    for (const [file, cfg] of Object.entries(models)) writeFileSync(join(modelsDir, `${file}.yaml`), stringify(cfg));
    const full: NodeConfigInput = {
      ...config,
      server: { port: 0, ...config.server, host: launch ? (config.server?.host ?? '127.0.0.1') : '127.0.0.1' },
      cluster: { node_id: 'bench', ...config.cluster, store_dir: join(dir, 'store') },
      models: { ...config.models, config_dir: modelsDir },
      console: { token: BENCH_CONSOLE_TOKEN, ...config.console },
    };
    const file = join(dir, 'node.yaml');
    writeFileSync(file, stringify(full));
    return { ...(await this.startCli(['node', '--config', file], { launch, timeoutMs })), dir };
  }

  /** Starts a node again on the config and store `startNode` gave it (after it stopped). */
  async restartNode(node: CliProcess, launch?: Launch): Promise<CliProcess> {
    if (!node.dir) throw new Error('only a node started by startNode can be restarted');
    return { ...(await this.startCli(['node', '--config', join(node.dir, 'node.yaml')], { launch })), dir: node.dir };
  }

  /** SIGTERM every child (SIGKILL after `graceMs`), then remove the temp folders. */
  async close(graceMs = 8_000): Promise<void> {
    await Promise.all([...this.children].map((p) => stopChild(p, graceMs)));
    this.removeDirs();
    open.delete(this);
  }

  /** Synchronous last resort (process exit): SIGKILL every child, remove the temp folders. */
  killNow(): void {
    for (const p of this.children) {
      try {
        p.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
    this.children.clear();
    this.removeDirs();
    open.delete(this);
  }

  private removeDirs() {
    for (const d of this.dirs) rmSync(d, { recursive: true, force: true });
    this.dirs.clear();
  }
}

function stopChild(proc: ChildProcess, graceMs: number): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    proc.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

/** Kills the children and removes the folders of every scope still open. */
export function killAllNow(): void {
  for (const s of [...open]) s.killNow();
}

/** Starts a command some other way than as a plain child (inside a network host's namespace). */
export type Launch = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` until it returns a truthy value; throws after `timeoutMs`. */
export async function until<T>(
  check: () => Promise<T> | T,
  what: string,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`bench: timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await sleep(everyMs);
  }
}

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A real router node as a child process (`node out/main/cli.js node --config <file>`) on a free loopback port. */

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const CLI = join(repoRoot, 'out/main/cli.js');

/** 24 characters, not a placeholder. */
export const E2E_CONSOLE_TOKEN = 'e2e-console-token-24char';
const E2E_CLUSTER_TOKEN = 'e2e-cluster-token-0123456789';

export interface ModelFile {
  /** File name without extension: the model's local ID. */
  localId: string;
  yaml: string;
}

export interface RouterNode {
  url: string;
  consoleToken: string;
  dir: string;
  /** Everything the node printed so far. */
  output(): string;
  stop(): Promise<void>;
}

import { freePort } from '../../../src-router/backends/free-port';

export { freePort };

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((r) => child.once('exit', () => r()));
}

async function waitForHealth(url: string, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `router node exited (${child.exitCode ?? child.signalCode}) before /health answered:\n${output()}`,
      );
    }
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1_000) });
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`router node /health not 200 within ${timeoutMs} ms (last: ${last}):\n${output()}`);
}

export interface RouterNodeOptions {
  nodeId?: string;
  models: ModelFile[];
  healthTimeoutMs?: number;
  /** More keys of the `console:` section, as YAML lines without indent (e.g. `routing_writes_enabled: false`). */
  consoleLines?: string[];
  /** More keys of the `models:` section, as YAML lines without indent (e.g. `browse_dirs: [/srv/models]`). */
  modelsLines?: string[];
  /** Whole further sections of the node config, as YAML (e.g. a `routing:` block). */
  extraYaml?: string;
  /** Environment of the node process besides this one's (e.g. `INFERENCE_DEPLOY_ENABLED`). */
  env?: Record<string, string>;
}

export async function startRouterNode(opts: RouterNodeOptions): Promise<RouterNode> {
  const dir = mkdtempSync(join(tmpdir(), 'routerdesk-e2e-'));
  const modelsDir = join(dir, 'models');
  mkdirSync(modelsDir);
  for (const m of opts.models) writeFileSync(join(modelsDir, `${m.localId}.yaml`), m.yaml);

  const port = await freePort();
  const configFile = join(dir, 'node.yaml');
  writeFileSync(
    configFile,
    [
      'server:',
      '  host: 127.0.0.1',
      `  port: ${port}`,
      'cluster:',
      '  role: standalone',
      `  node_id: ${opts.nodeId ?? 'e2e-node'}`,
      `  token: ${E2E_CLUSTER_TOKEN}`,
      `  store_dir: ${join(dir, 'store')}`,
      'models:',
      `  config_dir: ${modelsDir}`,
      ...(opts.modelsLines ?? []).map((l) => `  ${l}`),
      'console:',
      `  token: ${E2E_CONSOLE_TOKEN}`,
      ...(opts.consoleLines ?? []).map((l) => `  ${l}`),
      opts.extraYaml ?? '',
      '',
    ].join('\n'),
  );

  let log = '';
  const child = spawn(process.execPath, [CLI, 'node', '--config', configFile], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...opts.env },
  });
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const output = () => log;

  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited(child);
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await waitForHealth(url, child, output, opts.healthTimeoutMs ?? 20_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, consoleToken: E2E_CONSOLE_TOKEN, dir, output, stop };
}

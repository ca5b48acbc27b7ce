import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src-router/backends/free-port';
import { spawnRedis } from '../../src-router/bench/redis';
import { ensureRedisServer } from './system-deps';

export interface TestRedis {
  url: string;
  port: number;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
  /** SIGKILL (an outage, not a shutdown) and wait for the exit. */
  kill(): Promise<void>;
  /** Starts a fresh, empty server on the same port (after stop or kill) and waits until it answers PING. */
  restart(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * A throwaway `redis-server` on a free loopback port: no persistence (`--save "" --appendonly no`), its working
 * folder in a temp dir. Resolves once it answers PING. redis-server is found or installed, never skipped.
 */
export async function startRedis(): Promise<TestRedis> {
  const bin = ensureRedisServer();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'routerdesk-redis-'));
  let child: ChildProcess | undefined;

  const launch = async () => {
    mkdirSync(dir, { recursive: true });
    child = await spawnRedis(bin, port, dir, (proc) => {
      live.add(proc);
      proc.once('exit', () => live.delete(proc));
    });
  };

  const end = async (signal: NodeJS.Signals) => {
    if (!child) return;
    const proc = child;
    child = undefined;
    proc.kill(signal);
    await exited(proc);
  };

  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      await end('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
    kill: () => end('SIGKILL'),
    restart: async () => {
      await end('SIGKILL');
      await launch();
    },
  };
}

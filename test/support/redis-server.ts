import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src-router/backends/free-port';
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

/** True when something on 127.0.0.1:port answers PING with +PONG. */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(500, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

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
  let output = '';

  const launch = async () => {
    output = '';
    mkdirSync(dir, { recursive: true });
    const proc = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    live.add(proc);
    proc.stdout!.on('data', (d) => (output += d));
    proc.stderr!.on('data', (d) => (output += d));
    proc.once('exit', () => live.delete(proc));
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode}:\n${output}`);
      if (await pings(port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    proc.kill('SIGKILL');
    throw new Error(`redis-server did not answer PING on ${port} within 10 s:\n${output}`);
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

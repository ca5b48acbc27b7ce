/**
 * A throwaway `redis-server` for the fault suite, found the way the tests find it (test/support/redis-server.ts and
 * system-deps.ts: on PATH or in the sbin folders apt uses, `debian-tool.ts`); installed when missing (Debian, root),
 * else the bench fails with the command to install it. No persistence, loopback only, its folder a temp dir of the scope; stopped with the scope.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from '../backends/free-port';
import { debianTool } from '../debian-tool';
import type { FaultScope } from './faults-cluster';

export function redisServerBinary(): string {
  return debianTool('redis-server', 'redis-server', 'the redis-restart scenario runs a real one');
}

/** True when something on 127.0.0.1:port answers PING with +PONG. */
export function pings(port: number): Promise<boolean> {
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

/**
 * Starts `redis-server` on 127.0.0.1:`port` with no persistence (`--save "" --appendonly no`), working folder `dir`,
 * and resolves once it answers PING (within 10 s; it is killed and the start rejects otherwise). `adopt` sees the
 * process as soon as it exists (a scope that must stop it). The tests' Redis uses it too.
 */
export async function spawnRedis(
  bin: string,
  port: number,
  dir: string,
  adopt: (proc: ChildProcess) => void = () => {},
): Promise<ChildProcess> {
  let output = '';
  const proc = spawn(
    bin,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--loglevel',
      'warning',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  adopt(proc);
  proc.stdout!.on('data', (d) => (output += d));
  proc.stderr!.on('data', (d) => (output += d));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode}:\n${output}`);
    if (await pings(port)) return proc;
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill('SIGKILL');
  throw new Error(`redis-server did not answer PING on port ${port} within 10 s:\n${output}`);
}

export interface BenchRedis {
  url: string;
  port: number;
  /** SIGTERM (a shutdown) and wait for the exit. */
  stop(): Promise<void>;
  /** A fresh, empty server on the same port, once it answers PING. */
  start(): Promise<void>;
}

export async function startRedis(scope: FaultScope): Promise<BenchRedis> {
  const bin = redisServerBinary();
  const port = await freePort();
  const dir = scope.tempDir('routerdesk-bench-redis-');
  let child: ChildProcess | undefined;

  const start = async () => {
    child = await spawnRedis(bin, port, dir, (proc) => scope.adopt(proc));
  };

  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
    });
  };

  await start();
  return { url: `redis://127.0.0.1:${port}`, port, stop, start };
}

import { constants } from 'node:fs';
import { access, mkdir, readFile, statfs, unlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { KeySpace } from '../kv';
import type { SelfTestCheck } from './self-tests';

/** `1.5 GiB` style sizes for details. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/** Writes, reads back and deletes a temp file in `dir` (creating `dir` if needed). */
export function storeWritableCheck(dir: string, name = 'store writable'): SelfTestCheck {
  return {
    name,
    run: async () => {
      await mkdir(dir, { recursive: true });
      const file = join(dir, `.selftest-${process.pid}-${Date.now()}`);
      const token = `ok ${Math.random()}`;
      try {
        await writeFile(file, token);
        if ((await readFile(file, 'utf8')) !== token)
          return { status: 'fail', detail: `${dir}: read back differs from what was written` };
      } finally {
        await unlink(file).catch(() => {});
      }
      return { status: 'pass', detail: `${dir} writable` };
    },
  };
}

/** Free space available to this process in `dir` (statfs); warn under `warnBelowBytes`, fail under `failBelowBytes`. */
export function freeSpaceCheck(
  dir: string,
  opts: { warnBelowBytes?: number; failBelowBytes?: number; name?: string } = {},
): SelfTestCheck {
  const warnBelow = opts.warnBelowBytes ?? 1024 ** 3;
  return {
    name: opts.name ?? 'store free space',
    run: async () => {
      const s = await statfs(dir);
      const free = s.bavail * s.bsize;
      const detail = `${formatBytes(free)} free of ${formatBytes(s.blocks * s.bsize)} in ${dir}`;
      if (opts.failBelowBytes !== undefined && free < opts.failBelowBytes)
        return { status: 'fail', detail: `${detail} (below ${formatBytes(opts.failBelowBytes)})` };
      if (free < warnBelow) return { status: 'warn', detail: `${detail} (below ${formatBytes(warnBelow)})` };
      return { status: 'pass', detail };
    },
  };
}

/** Where an executable `command` resolves: an absolute (or ./relative) path as given, a bare name through PATH. */
export async function resolveExecutable(
  command: string,
  pathEnv = process.env.PATH ?? '',
): Promise<string | undefined> {
  const canRun = (file: string) =>
    access(file, constants.X_OK).then(
      () => true,
      () => false,
    );
  if (isAbsolute(command) || command.includes('/')) {
    const file = resolve(command);
    return (await canRun(file)) ? file : undefined;
  }
  for (const dir of pathEnv.split(delimiter).filter(Boolean)) {
    const file = join(dir, command);
    if (await canRun(file)) return file;
  }
  return undefined;
}

/** An engine binary is present and executable, as an absolute path or on PATH. */
export function engineBinaryCheck(command: string, opts: { name?: string; pathEnv?: string } = {}): SelfTestCheck {
  return {
    name: opts.name ?? `engine binary ${command}`,
    run: async () => {
      const found = await resolveExecutable(command, opts.pathEnv);
      if (found) return { status: 'pass', detail: found };
      const where = isAbsolute(command) || command.includes('/') ? 'not found or not executable' : 'not found on PATH';
      return { status: 'fail', detail: `${command}: ${where}` };
    },
  };
}

/** One round trip to the keyspace (PTTL of a key nobody writes). `label` names it, e.g. a redacted Redis URL. */
export function keyspaceReachableCheck(ks: KeySpace, opts: { name?: string; label?: string } = {}): SelfTestCheck {
  const label = opts.label ?? `${ks.kind} keyspace`;
  return {
    name: opts.name ?? 'keyspace reachable',
    run: async () => {
      try {
        await ks.pttl('routerdesk:selftest:probe');
        return { status: 'pass', detail: `${label} answered` };
      } catch (err) {
        return { status: 'fail', detail: `${label}: ${err instanceof Error ? err.message : String(err)}` };
      }
    },
  };
}

/** Something accepts TCP connections on host:port (a wildcard host is probed on loopback). */
export function portBoundCheck(
  host: string,
  port: number,
  opts: { name?: string; timeoutMs?: number } = {},
): SelfTestCheck {
  const target = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return {
    name: opts.name ?? `port ${port} bound`,
    run: () =>
      new Promise((done) => {
        const sock = connect({ host: target, port });
        const finish = (ok: boolean, why: string) => {
          sock.destroy();
          done(
            ok
              ? { status: 'pass', detail: `${target}:${port} accepting connections` }
              : { status: 'fail', detail: `${target}:${port} ${why}` },
          );
        };
        sock.setTimeout(opts.timeoutMs ?? 1000, () => finish(false, 'did not answer'));
        sock.once('connect', () => finish(true, ''));
        sock.once('error', (err: NodeJS.ErrnoException) => finish(false, err.code ?? err.message));
      }),
  };
}

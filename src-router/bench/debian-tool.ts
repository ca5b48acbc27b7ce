/**
 * System tools the benchmarks (and the tests, `test/support/system-deps.ts`) run: found on PATH or in the sbin folders
 * apt uses; a missing one is installed from Debian's package when we can (Debian, root), otherwise the caller fails
 * with the command to run. Never skipped.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const APT_TIMEOUT_MS = 10 * 60_000;

/** First executable `name` on PATH (plus the sbin folders apt uses), or null. */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | null {
  for (const dir of [...path.split(delimiter).filter(Boolean), '/usr/sbin', '/usr/bin', '/sbin', '/bin']) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      /* not here */
    }
  }
  return null;
}

export const canApt = (): boolean => existsSync('/etc/debian_version') && process.getuid?.() === 0;

/** `apt-get update && apt-get install -y pkg`, its output on stderr, bounded in time; throws when it fails. */
export function aptInstall(pkg: string): void {
  const run = (args: string[]) => execFileSync('apt-get', args, { stdio: ['ignore', 2, 2], timeout: APT_TIMEOUT_MS, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  process.stderr.write(`${pkg} is missing: apt-get update && apt-get install -y ${pkg}\n`);
  run(['update']);
  run(['install', '-y', pkg]);
}

/** `name` from Debian's package `pkg`: found, else installed (Debian, root), else an error naming the command and `why`. */
export function debianTool(name: string, pkg: string, why: string): string {
  const found = findOnPath(name);
  if (found) return found;
  const hint = `Run: apt-get update && apt-get install -y ${pkg}`;
  if (!canApt()) throw new Error(`${name} is not installed (${why}). ${hint}`);
  try {
    aptInstall(pkg);
  } catch (err) {
    throw new Error(`installing ${pkg} failed (${(err as Error).message}). ${hint}`);
  }
  const after = findOnPath(name);
  if (!after) throw new Error(`${name} is still missing after installing ${pkg}. ${hint}`);
  return after;
}

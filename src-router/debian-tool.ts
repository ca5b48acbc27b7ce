/**
 * System tools the benchmarks (and the tests, `test/support/system-deps.ts`) run: found on PATH or in the sbin folders
 * apt uses; a missing one is installed from Debian's package when we can (Debian, root), otherwise the caller fails
 * with the command to run. Never skipped.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const APT_TIMEOUT_MS = 10 * 60_000;

/** Whether `file` exists and may be run. */
export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** First executable `name` on PATH (plus the sbin folders apt uses), or null. */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | null {
  for (const dir of [...path.split(delimiter).filter(Boolean), '/usr/sbin', '/usr/bin', '/sbin', '/bin']) {
    const file = join(dir, name);
    if (isExecutable(file)) return file;
  }
  return null;
}

export const canApt = (): boolean => existsSync('/etc/debian_version') && process.getuid?.() === 0;

/** `apt-get update && apt-get install -y pkg`, its output on stderr, bounded in time; throws when it fails. */
export function aptInstall(pkg: string): void {
  const run = (args: string[]) =>
    execFileSync('apt-get', args, {
      stdio: ['ignore', 2, 2],
      timeout: APT_TIMEOUT_MS,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  process.stderr.write(`${pkg} is missing: apt-get update && apt-get install -y ${pkg}\n`);
  run(['update']);
  run(['install', '-y', pkg]);
}

/**
 * What `find` finds; else Debian's package `pkg` is installed (Debian, root) and it is looked for again; else an error
 * naming `what` and the command to run (`hint`).
 */
export function ensureDebianTool(
  what: string,
  pkg: string,
  find: () => string | null,
  hint = `apt-get update && apt-get install -y ${pkg}`,
): string {
  const found = find();
  if (found) return found;
  if (!canApt())
    throw new Error(`${what} is not installed and cannot be installed from here (needs Debian and root). Run: ${hint}`);
  try {
    aptInstall(pkg);
  } catch (err) {
    throw new Error(`installing ${pkg} failed (${(err as Error).message}). Run: ${hint}`);
  }
  const after = find();
  if (!after) throw new Error(`${what} is still missing after installing ${pkg}. Run: ${hint}`);
  return after;
}

/** `name` from Debian's package `pkg`, on PATH: found, else installed, else an error naming the command and `why`. */
export function debianTool(name: string, pkg: string, why: string): string {
  return ensureDebianTool(`${name} (${why})`, pkg, () => findOnPath(name));
}

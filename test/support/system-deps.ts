import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * System binaries the integration and e2e tests need. A missing one is installed when we can (Debian, root),
 * otherwise the tests fail with the command to run. They are never skipped.
 */

export const INSTALL_HINT = 'apt-get install -y chromium redis-server';
const APT_TIMEOUT_MS = 10 * 60_000;

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** First executable `name` on PATH (plus the sbin folders apt uses), or null. */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | null {
  const dirs = [...path.split(delimiter).filter(Boolean), '/usr/sbin', '/usr/bin', '/sbin', '/bin'];
  for (const dir of dirs) {
    const file = join(dir, name);
    if (isExecutable(file)) return file;
  }
  return null;
}

const canApt = () => existsSync('/etc/debian_version') && process.getuid?.() === 0;

function aptInstall(pkg: string): void {
  const run = (args: string[]) =>
    execFileSync('apt-get', args, {
      stdio: 'inherit',
      timeout: APT_TIMEOUT_MS,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  console.error(`[system-deps] ${pkg} is missing: apt-get update && apt-get install -y ${pkg}`);
  run(['update']);
  run(['install', '-y', pkg]);
}

function ensure(what: string, pkg: string, find: () => string | null): string {
  const found = find();
  if (found) return found;
  if (!canApt()) {
    throw new Error(`${what} is not installed and cannot be installed from here (needs Debian and root). Run: ${INSTALL_HINT}`);
  }
  try {
    aptInstall(pkg);
  } catch (err) {
    throw new Error(`installing ${pkg} failed (${(err as Error).message}). Run: ${INSTALL_HINT}`);
  }
  const installed = find();
  if (!installed) throw new Error(`${what} still missing after apt-get install -y ${pkg}. Run: ${INSTALL_HINT}`);
  return installed;
}

/** Debian's Chromium, which Playwright drives (`executablePath`). */
export function ensureChromium(): string {
  return ensure('chromium (/usr/bin/chromium)', 'chromium', () => (isExecutable('/usr/bin/chromium') ? '/usr/bin/chromium' : null));
}

/** `redis-server` on PATH, for the kv integration tests. */
export function ensureRedisServer(): string {
  return ensure('redis-server', 'redis-server', () => findOnPath('redis-server'));
}

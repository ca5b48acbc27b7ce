import { accessSync, constants } from 'node:fs';
import { aptInstall, canApt, findOnPath } from '../../src-router/bench/debian-tool';

/**
 * System binaries the integration and e2e tests need. A missing one is installed when we can (Debian, root),
 * otherwise the tests fail with the command to run. They are never skipped.
 */

export const INSTALL_HINT = 'apt-get install -y chromium redis-server';

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
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

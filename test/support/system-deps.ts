import { ensureDebianTool, findOnPath, isExecutable } from '../../src-router/debian-tool';

/**
 * System binaries the integration and e2e tests need. A missing one is installed when we can (Debian, root),
 * otherwise the tests fail with the command to run. They are never skipped.
 */

export const INSTALL_HINT = 'apt-get install -y chromium redis-server nginx prometheus';

/** Debian's Chromium, which Playwright drives (`executablePath`). */
export function ensureChromium(): string {
  return ensureDebianTool(
    'chromium (/usr/bin/chromium)',
    'chromium',
    () => (isExecutable('/usr/bin/chromium') ? '/usr/bin/chromium' : null),
    INSTALL_HINT,
  );
}

/** `redis-server` on PATH, for the kv integration tests. */
export function ensureRedisServer(): string {
  return ensureDebianTool('redis-server', 'redis-server', () => findOnPath('redis-server'), INSTALL_HINT);
}

/** Debian's Prometheus server, which the metrics test scrapes a cluster with. */
export function ensurePrometheus(): string {
  return ensureDebianTool('prometheus', 'prometheus', () => findOnPath('prometheus'), INSTALL_HINT);
}

/** `promtool` (shipped in Debian's prometheus package): `promtool check metrics` lints /metrics output. */
export function ensurePromtool(): string {
  return ensureDebianTool('promtool', 'prometheus', () => findOnPath('promtool'), INSTALL_HINT);
}

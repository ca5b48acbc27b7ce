import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureDesktopConfig } from '../../src-main/first-run';
import {
  denyAllPermissions,
  guardAllWebContents,
  guardWebContents,
  type WebContentsLike,
} from '../../src-main/security';
import { loadNodeConfig } from '../../src-router/config';
import { tempDir } from '../support/node-harness';

// Issue #13: the desktop app's main-process logic, without the Electron binary.
describe('first launch', () => {
  it('with no config named, writes a default standalone config and a models folder in user data, once', () => {
    const userData = tempDir();
    const path = join(userData, 'node.yaml');
    const first = ensureDesktopConfig({ path, source: 'default' });
    expect(first).toEqual({ path, created: true, modelsDir: join(userData, 'models') });
    expect(existsSync(join(userData, 'models'))).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const config = loadNodeConfig(path);
    expect(config.cluster).toMatchObject({ role: 'standalone', store_dir: join(userData, 'store') });
    expect(config.models.config_dir).toBe(join(userData, 'models'));
    expect(config.redis.url).toBeUndefined(); // the embedded keyspace
    // An operator's edit is never overwritten.
    writeFileSync(path, 'server: { port: 9999 }\n');
    expect(ensureDesktopConfig({ path, source: 'default' }).created).toBe(false);
    expect(parse(readFileSync(path, 'utf8'))).toEqual({ server: { port: 9999 } });
  });

  it('a config named on the command line or in the environment must exist: a clear error, nothing written', () => {
    const dir = tempDir();
    const path = join(dir, 'missing.yaml');
    expect(() => ensureDesktopConfig({ path, source: 'argument' })).toThrow(
      /missing\.yaml \(from --config\) does not exist/,
    );
    expect(() => ensureDesktopConfig({ path, source: 'environment' })).toThrow(/ROUTERDESK_CONFIG/);
    expect(existsSync(path)).toBe(false);
  });
});

describe('locked down', () => {
  it('every permission request and check is denied', () => {
    let request: ((wc: unknown, p: string, cb: (g: boolean) => void) => void) | undefined;
    let check: (() => boolean) | undefined;
    denyAllPermissions({
      setPermissionRequestHandler: (h) => (request = h),
      setPermissionCheckHandler: (h) => (check = h),
    });
    const answers: boolean[] = [];
    for (const p of ['media', 'geolocation', 'notifications', 'clipboard-read'])
      request!({}, p, (g) => answers.push(g));
    expect(answers).toEqual([false, false, false, false]);
    expect(check!()).toBe(false);
  });

  function contents() {
    const listeners: Record<string, ((e: { preventDefault(): void }) => void)[]> = {};
    let open: ((d: { url: string }) => { action: 'deny' }) | undefined;
    const wc: WebContentsLike = {
      setWindowOpenHandler: (h) => (open = h),
      on: (event, l) => void (listeners[event] ??= []).push(l),
    };
    const fire = (event: string) => {
      let prevented = false;
      for (const l of listeners[event] ?? []) l({ preventDefault: () => (prevented = true) });
      return prevented;
    };
    return { wc, open: (url: string) => open!({ url }), fire };
  }

  it('no new windows (http links go to the system browser), no navigation, no webviews', () => {
    const external: string[] = [];
    const c = contents();
    guardWebContents(c.wc, (u) => external.push(u));
    expect(c.open('https://example.org/docs')).toEqual({ action: 'deny' });
    expect(c.open('file:///etc/passwd')).toEqual({ action: 'deny' });
    expect(external).toEqual(['https://example.org/docs']);
    expect(c.fire('will-navigate')).toBe(true);
    expect(c.fire('will-attach-webview')).toBe(true);
  });

  it('every web contents created later gets the same guards', () => {
    let created: ((e: unknown, wc: WebContentsLike) => void) | undefined;
    guardAllWebContents({ on: (_e, l) => (created = l) }, () => {});
    const c = contents();
    created!({}, c.wc);
    expect(c.fire('will-navigate')).toBe(true);
    expect(c.open('http://x')).toEqual({ action: 'deny' });
  });
});

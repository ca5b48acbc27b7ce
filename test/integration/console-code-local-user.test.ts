import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/node-harness';
import { linkPageOf, type ServedWithBrowser, serveWithBrowser } from '../support/serve-with-browser';

// Issue #37 item 1: the one-time console code was on the browser's command line; any local user watching
// /proc/*/cmdline exchanged it before the browser did and got the console token (an operator's, on a serve node). Here
// an unprivileged local user (nobody, through setpriv) reads every command line and environment it may, over and over,
// while `serve` opens the browser (a BROWSER command that stays alive, as a browser does), and tries to read the page
// the browser was started on and the node's access record. It finds nothing it can exchange; the owner's page works.

const NOBODY = 65_534;
/** Every process's command line and environment this user may read, pass after pass, until told to stop. */
const WATCHER = `#!/bin/sh
out="$1"
while [ ! -e "$out/stop" ]; do
  head -c 1000000 /proc/[0-9]*/cmdline /proc/[0-9]*/environ 2>/dev/null | tr '\\000' ' ' > "$out/pass.txt"
  cat "$out/pass.txt" >> "$out/seen.txt"
  for u in $(grep -o 'file://[^ ]*' "$out/seen.txt" | sort -u); do
    p="\${u#file://}"
    cat "$p" "\${p%/*}/access.json" >> "$out/read.txt" 2>> "$out/denied.txt"
  done
  echo pass >> "$out/passes.txt"
done
`;

const root = process.getuid?.() === 0;

describe.skipIf(!root)(
  'a local user watching command lines gets nothing to exchange while serve opens the browser',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'routerdesk-local-user-'));
    const out = join(dir, 'watch');
    let watcher: ChildProcess | undefined;
    let served: ServedWithBrowser | undefined;

    afterAll(async () => {
      if (!existsSync(join(out, 'stop'))) writeFileSync(join(out, 'stop'), '');
      if (watcher && watcher.exitCode === null) await new Promise((r) => watcher!.once('exit', r));
      await served?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    const passes = () =>
      existsSync(join(out, 'passes.txt')) ? readFileSync(join(out, 'passes.txt'), 'utf8').length : 0;
    const seen = () => (existsSync(join(out, 'seen.txt')) ? readFileSync(join(out, 'seen.txt'), 'utf8') : '');

    it('nothing it reads exchanges for the token; the page and the access record are closed to it; the owner gets in', {
      timeout: 120_000,
    }, async () => {
      chmodSync(dir, 0o755);
      mkdirSync(out, { mode: 0o777 });
      chmodSync(out, 0o777);
      writeFileSync(join(out, 'watch.sh'), WATCHER, { mode: 0o755 });
      watcher = spawn(
        'setpriv',
        [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'sh', join(out, 'watch.sh'), out],
        { stdio: 'ignore' },
      );
      await eventually(() => passes() > 0, { what: 'the watcher read every process once', timeoutMs: 30_000 });

      served = await serveWithBrowser({ holdBrowser: true });
      const opened = served.browserArgv[0];
      // The watcher saw the browser's command line, then tried the files it names at least twice more.
      await eventually(() => seen().includes(opened), { what: 'the watcher saw the browser', timeoutMs: 30_000 });
      const after = passes();
      await eventually(() => passes() >= after + 2 * 'pass\n'.length, { what: 'two more passes', timeoutMs: 30_000 });
      writeFileSync(join(out, 'stop'), '');
      await new Promise((r) => (watcher!.exitCode === null ? watcher!.once('exit', r) : r(null)));

      // Everything that looks like a one-time code in what it read is tried, as it would try it: none is taken.
      const text = seen();
      const candidates = [...new Set([...text.matchAll(/code=([\w-]{8,})/g)].map((m) => m[1]))];
      for (const code of candidates) {
        const res = await fetch(`${served.url}/router/v1/console/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ code }),
        });
        expect(res.status, `a code read from /proc by another user: ${code}`).not.toBe(200);
      }
      // It could not read the page, nor the access record beside it.
      expect(existsSync(join(out, 'read.txt')) ? readFileSync(join(out, 'read.txt'), 'utf8') : '').toBe('');
      expect(readFileSync(join(out, 'denied.txt'), 'utf8')).toMatch(/open-console\.html: Permission denied/);
      expect(readFileSync(join(out, 'denied.txt'), 'utf8')).toMatch(/access\.json: Permission denied/);

      // The owner's browser flow works: the page's code, read as its owner, is exchanged once for the token.
      const page = linkPageOf(opened);
      expect(text).not.toContain(page.code);
      const session = await fetch(`${served.url}/router/v1/console/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: page.code }),
      });
      expect(session.status).toBe(200);
      const { token } = (await session.json()) as { token: string };
      expect(text).not.toContain(token);
    });
  },
);

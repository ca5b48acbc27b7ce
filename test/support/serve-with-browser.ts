import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src-router/backends/free-port';

const CLI = join(new URL('../..', import.meta.url).pathname, 'out', 'main', 'cli.js');

export interface ServedWithBrowser {
  /** The node's origin. */
  url: string;
  /** The UI link `serve` printed. */
  printed: string;
  /** The arguments the browser command was started with (what `ps` shows every local user). */
  browserArgv: string[];
  /** The folder `serve` runs in (`--dir`). */
  serveDir: string;
  output(): string;
  /** Lets a browser started with `holdBrowser` end. */
  releaseBrowser(): void;
  stop(): Promise<void>;
}

/**
 * A browser command (BROWSER, with a desktop: DISPLAY) that records the arguments it is started with, one a line.
 * `hold`: it then stays alive (as a real browser does, its command line on show) until `release`.
 */
export function fakeBrowser(
  dir: string,
  hold = false,
): { env: Record<string, string>; argv: () => string[]; release: () => void } {
  const record = join(dir, 'browser-argv.txt');
  const released = join(dir, 'browser-released');
  const browser = join(dir, 'fake-browser.sh');
  const wait = hold ? `while [ ! -e '${released}' ]; do sleep 0.1; done\n` : '';
  writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$@" >> '${record}'\n${wait}`);
  chmodSync(browser, 0o755);
  return {
    env: { DISPLAY: ':routerdesk-test', BROWSER: browser },
    argv: () => (existsSync(record) ? readFileSync(record, 'utf8').split('\n').filter(Boolean) : []),
    release: () => writeFileSync(released, ''),
  };
}

/**
 * Runs `routerdesk serve` for real in a temp folder on a free port, with a desktop (DISPLAY) and BROWSER set to a
 * small script that records its arguments, one a line; resolves once the UI line is printed and the browser started.
 */
export async function serveWithBrowser(opts: { holdBrowser?: boolean } = {}): Promise<ServedWithBrowser> {
  const dir = mkdtempSync(join(tmpdir(), 'routerdesk-serve-browser-'));
  const browser = fakeBrowser(dir, opts.holdBrowser);
  const port = await freePort();
  const env = { ...process.env, ROUTERDESK_LOG_LEVEL: 'warn', ...browser.env };
  const proc: ChildProcess = spawn(
    process.execPath,
    [CLI, 'serve', '--dir', join(dir, 'serve'), '--port', String(port)],
    { stdio: ['ignore', 'pipe', 'pipe'], env },
  );
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const stop = async () => {
    browser.release();
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGINT');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`serve exited ${proc.exitCode}:\n${out}`);
      const printed = /UI:\s+(http:\/\/\S+)/.exec(out)?.[1];
      const argv = browser.argv();
      if (printed && argv.length)
        return {
          url: new URL(printed).origin,
          printed,
          browserArgv: argv,
          serveDir: join(dir, 'serve'),
          output: () => out,
          releaseBrowser: browser.release,
          stop,
        };
      if (Date.now() > deadline) throw new Error(`serve did not print its UI link and start the browser:\n${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * What the browser was started on: the file URL of an owner-only page (0600, in a 0700 folder) that sends it to the
 * node with a one-time code. Returns the page's path, the node's origin and the code, read as the owner.
 */
export function linkPageOf(opened: string): { page: string; origin: string; code: string } {
  const url = new URL(opened);
  if (url.protocol !== 'file:') throw new Error(`the browser was started on ${opened}, not on a page file`);
  const page = fileURLToPath(url);
  const modes = [statSync(page).mode & 0o777, statSync(dirname(page)).mode & 0o777];
  if (modes[0] !== 0o600 || modes[1] !== 0o700)
    throw new Error(`${page} is not owner-only: ${modes.map((m) => m.toString(8)).join(' in ')}`);
  const link = /http-equiv="refresh" content="0;url=([^"]+)"/.exec(readFileSync(page, 'utf8'))?.[1];
  if (!link) throw new Error(`${page} holds no console link`);
  const target = new URL(link.replace(/&#38;/g, '&'));
  return { page, origin: target.origin, code: target.searchParams.get('code') ?? '' };
}

import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src-router/backends/free-port';

const CLI = join(new URL('../..', import.meta.url).pathname, 'out', 'main', 'cli.js');

export interface ServedWithBrowser {
  /** The node's origin. */
  url: string;
  /** The UI link `serve` printed. */
  printed: string;
  /** The arguments the browser command was started with (what `ps` shows every local user). */
  browserArgv: string[];
  output(): string;
  stop(): Promise<void>;
}

/** A browser command (BROWSER, with a desktop: DISPLAY) that records the arguments it is started with, one a line. */
export function fakeBrowser(dir: string): { env: Record<string, string>; argv(): string[] } {
  const record = join(dir, 'browser-argv.txt');
  const browser = join(dir, 'fake-browser.sh');
  writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$@" >> '${record}'\n`);
  chmodSync(browser, 0o755);
  return {
    env: { DISPLAY: ':routerdesk-test', BROWSER: browser },
    argv: () => (existsSync(record) ? readFileSync(record, 'utf8').split('\n').filter(Boolean) : []),
  };
}

/**
 * Runs `routerdesk serve` for real in a temp folder on a free port, with a desktop (DISPLAY) and BROWSER set to a
 * small script that records its arguments, one a line; resolves once the UI line is printed and the browser started.
 */
export async function serveWithBrowser(): Promise<ServedWithBrowser> {
  const dir = mkdtempSync(join(tmpdir(), 'routerdesk-serve-browser-'));
  const browser = fakeBrowser(dir);
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
        return { url: new URL(printed).origin, printed, browserArgv: argv, output: () => out, stop };
      if (Date.now() > deadline) throw new Error(`serve did not print its UI link and start the browser:\n${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
}

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliRef } from './engines';

/** The project folder (where package.json names `routerdesk`), found from this module's location: source or built. */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'routerdesk') return dir;
      } catch {
        /* keep looking */
      }
    }
    const up = dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
}

/** How to run this project's CLI as a child (for the built-in engines): `ROUTERDESK_CLI`, else the built out/main/cli.js. */
export function cliRef(): CliRef {
  const script = process.env.ROUTERDESK_CLI ?? join(projectRoot(), 'out', 'main', 'cli.js');
  return { node: process.execPath, script, env: process.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : undefined };
}

/** The built replay worker (its own entry of the main build, beside cli.js): what-if replays run in it, off the event loop. */
export const replayWorkerFile = () => join(projectRoot(), 'out', 'main', 'replay-worker.js');

export const uiDir = () => join(projectRoot(), 'out', 'renderer');

/** The folder `routerdesk serve` uses when no `--dir` is given (its node config and store live there; `bench` keeps runs in that store). */
export const DEFAULT_SERVE_DIR = '.routerdesk';

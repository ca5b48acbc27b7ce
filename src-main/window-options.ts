import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserWindowConstructorOptions } from 'electron';

/**
 * The preload bundle electron-vite wrote. A sandboxed renderer can only run a CommonJS preload, so a `.cjs`/`.js`
 * build is preferred when the build emits one; `.mjs` is what the current config emits.
 */
export function findPreload(preloadDir: string): string {
  for (const name of ['preload.cjs', 'preload.js', 'preload.mjs']) {
    const file = join(preloadDir, name);
    if (existsSync(file)) return file;
  }
  throw new Error(`no preload bundle in ${preloadDir}: run \`npm run build\``);
}

/**
 * The main window: isolated, sandboxed, no Node in the page. The node's URL and console token reach the preload over
 * IPC (`CONNECTION_CHANNEL`), never as process arguments (a command line is readable by every user of the machine).
 */
export function mainWindowOptions(input: { preload: string }): BrowserWindowConstructorOptions {
  return {
    width: 1280,
    height: 800,
    minWidth: 800,
    minHeight: 500,
    title: 'Routerdesk',
    show: false,
    webPreferences: {
      preload: input.preload,
      contextIsolation: true,
      nodeIntegration: false,
      sandbox: true,
    },
  };
}

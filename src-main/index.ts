import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, safeStorage, shell } from 'electron';
import { loadNodeConfig } from '../src-router/config';
import { createNode } from '../src-router/node';
import { resolveConfigPath } from './config-path';
import { CONNECTION_CHANNEL } from './connection-channel';
import { keychainSealer } from './keychain-sealer';
import { findPreload, mainWindowOptions } from './window-options';

/** Electron main: load the config, run the router node in-process, open the window, close the node on quit. */

type RunningNode = Awaited<ReturnType<typeof createNode>>;

const here = dirname(fileURLToPath(import.meta.url)); // out/main
let node: RunningNode | null = null;
let closing = false;

async function start(): Promise<void> {
  const config = resolveConfigPath(process.argv, process.env, app.getPath('userData'));
  node = await createNode(loadNodeConfig(config.path), { version: app.getVersion(), configFile: config.path, tokenSealer: keychainSealer(safeStorage) });

  const running = node;
  const win = new BrowserWindow(mainWindowOptions({ preload: findPreload(join(here, '../preload')) }));
  // Only this window's own preload is answered the console token.
  ipcMain.on(CONNECTION_CHANNEL, (event) => {
    event.returnValue = event.sender === win.webContents ? { url: running.url, token: running.consoleToken } : {};
  });
  win.once('ready-to-show', () => win.show());
  // The window shows the console only: links open in the system browser, navigation elsewhere is refused.
  win.webContents.setWindowOpenHandler(({ url }) => {
    if (/^https?:/.test(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
  win.webContents.on('will-navigate', (event) => event.preventDefault());
  // The node serves this same renderer build (out/renderer) at `/`. Loading it from there keeps the page on the
  // console API's origin: a file:// page would need CORS on /router/v1/console/*, which the node does not answer.
  // The token still comes from the preload, never from the address.
  await win.loadURL(`${node.url}/`);
}

app.on('window-all-closed', () => app.quit());

app.on('before-quit', (event) => {
  if (!node || closing) return;
  event.preventDefault();
  closing = true;
  const running = node;
  node = null;
  running
    .close()
    .catch((err: unknown) => console.error('routerdesk: node did not close cleanly:', err))
    .finally(() => app.quit());
});

app
  .whenReady()
  .then(start)
  .catch((err: unknown) => {
    dialog.showErrorBox('Routerdesk could not start', err instanceof Error ? err.message : String(err));
    app.quit();
  });

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, safeStorage, session, shell } from 'electron';
import { busyPortFallback, NodeHost } from '../src-router/node-host';
import { resolveConfigPath } from './config-path';
import { CONNECTION_CHANNEL, PICK_MODEL_FILE_CHANNEL } from './connection-channel';
import { ensureDesktopConfig } from './first-run';
import { keychainSealer } from './keychain-sealer';
import { denyAllPermissions, guardAllWebContents } from './security';
import { tokenStorageOf } from './token-storage';
import { findPreload, mainWindowOptions } from './window-options';

/**
 * Electron main (thin: every piece of logic is a module with unit tests): one instance, a default config on first
 * launch, the router node in-process under a host that restarts it when the Settings screen writes a new config,
 * the window loading the node's own URL, everything else refused.
 */

const here = dirname(fileURLToPath(import.meta.url)); // out/main
let host: NodeHost | null = null;
let win: BrowserWindow | null = null;
let closing = false;

async function start(): Promise<void> {
  denyAllPermissions(session.defaultSession);
  const config = ensureDesktopConfig(resolveConfigPath(process.argv, process.env, app.getPath('userData')));
  host = await NodeHost.start({
    configFile: config.path,
    version: app.getVersion(),
    tokenSealer: keychainSealer(safeStorage),
    log: (m) => console.warn(`routerdesk: ${m}`),
    prepare: busyPortFallback((m) => console.warn(`routerdesk: ${m}`)),
    // A restart may move the node (a new port): the window follows it.
    onRestart: (node) => void win?.loadURL(`${node.url}/`),
  });
  const running = host;
  // Settings and the cluster dialog say whether remote clusters' tokens are really encrypted (not on basic_text).
  const tokenStorage = tokenStorageOf({
    platform: process.platform,
    encryptionAvailable: safeStorage.isEncryptionAvailable(),
    backend: process.platform === 'linux' ? safeStorage.getSelectedStorageBackend() : null,
  });
  if (!tokenStorage.sealed) console.warn(`routerdesk: ${tokenStorage.how}`);
  win = new BrowserWindow(mainWindowOptions({ preload: findPreload(join(here, '../preload')) }));
  const own = win;
  // Only this window's own preload is answered the console token.
  ipcMain.on(CONNECTION_CHANNEL, (event) => {
    event.returnValue =
      event.sender === own.webContents
        ? { url: running.current.url, token: running.current.consoleToken, tokenStorage }
        : {};
  });
  // The Add model dialog's native file dialog, for this window only: the path of one .gguf file, or null.
  ipcMain.handle(PICK_MODEL_FILE_CHANNEL, async (event) => {
    if (event.sender !== own.webContents) return null;
    const picked = await dialog.showOpenDialog(own, {
      title: 'Choose a model file',
      properties: ['openFile'],
      filters: [{ name: 'GGUF models', extensions: ['gguf'] }],
    });
    return picked.canceled ? null : (picked.filePaths[0] ?? null);
  });
  own.once('ready-to-show', () => own.show());
  // The node serves this same renderer build (out/renderer) at `/`. Loading it from there keeps the page on the
  // console API's origin: a file:// page would need CORS on /router/v1/console/*, which the node does not answer.
  // The token still comes from the preload, never from the address.
  await own.loadURL(`${running.current.url}/`);
}

// Tests and portable setups may name the user-data folder (the desktop config and store live there).
if (process.env.ROUTERDESK_USER_DATA) app.setPath('userData', process.env.ROUTERDESK_USER_DATA);

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  // A second launch focuses the window of the first.
  app.on('second-instance', () => {
    if (!win) return;
    if (win.isMinimized()) win.restore();
    win.focus();
  });
  guardAllWebContents(app, (url) => void shell.openExternal(url));
  app.on('window-all-closed', () => app.quit());
  app.on('before-quit', (event) => {
    if (!host || closing) return;
    event.preventDefault();
    closing = true;
    const running = host;
    host = null;
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
}

import { contextBridge, ipcRenderer } from 'electron';
import { CONNECTION_CHANNEL } from './connection-channel';

// Hands the renderer its node's URL and console token, asked of the main process over IPC (never a command-line
// argument: those are visible to every user of the machine), and how remote clusters' tokens are kept at rest;
// nothing else crosses the bridge.
const connection = (ipcRenderer.sendSync(CONNECTION_CHANNEL) ?? {}) as { url?: string; token?: string; tokenStorage?: unknown };
contextBridge.exposeInMainWorld('routerdesk', { url: connection.url ?? '', token: connection.token ?? '', tokenStorage: connection.tokenStorage ?? null });

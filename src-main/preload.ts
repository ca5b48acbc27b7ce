import { contextBridge, ipcRenderer } from 'electron';
import { CONNECTION_CHANNEL, PICK_MODEL_FILE_CHANNEL } from './connection-channel';

// Hands the renderer its node's URL and console token, asked of the main process over IPC (never a command-line
// argument: those are visible to every user of the machine), how remote clusters' tokens are kept at rest, and the
// native file dialog of the Add model dialog (a .gguf path, or null when cancelled); nothing else crosses the bridge.
const connection = (ipcRenderer.sendSync(CONNECTION_CHANNEL) ?? {}) as {
  url?: string;
  token?: string;
  tokenStorage?: unknown;
};
contextBridge.exposeInMainWorld('routerdesk', {
  url: connection.url ?? '',
  token: connection.token ?? '',
  tokenStorage: connection.tokenStorage ?? null,
  pickModelFile: (): Promise<string | null> => ipcRenderer.invoke(PICK_MODEL_FILE_CHANNEL),
});

import { contextBridge } from 'electron';

// Hands the renderer its node's URL and console token; nothing else crosses the bridge.
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? '';
contextBridge.exposeInMainWorld('routerdesk', { url: arg('routerdesk-url'), token: arg('routerdesk-token') });

import { resolveConnection, SESSION_KEY, type PreloadBridge, type ResolvedConnection } from './connection';

declare global {
  interface Window {
    /** Set by src-main/preload.ts in Electron; absent in a plain browser. */
    routerdesk?: PreloadBridge;
  }
}

/** Resolves from the real window, strips the token from history and keeps it for reloads of this tab only. */
export function connectFromWindow(win: Window): ResolvedConnection {
  let stored: string | null = null;
  try {
    stored = win.sessionStorage.getItem(SESSION_KEY);
  } catch {
    // storage disabled (file:// in some shells): reloads will need the token again
  }
  const resolved = resolveConnection({ bridge: win.routerdesk, href: win.location.href, storedToken: stored });
  if (resolved.cleanHref !== null) win.history.replaceState(win.history.state, '', resolved.cleanHref);
  if (resolved.source === 'query') {
    try {
      win.sessionStorage.setItem(SESSION_KEY, resolved.token);
    } catch {
      // see above
    }
  }
  return resolved;
}

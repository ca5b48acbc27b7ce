import {
  exchangeCode,
  type PreloadBridge,
  type ResolvedConnection,
  resolveConnection,
  SESSION_KEY,
} from './connection';

declare global {
  interface Window {
    /** Set by src-main/preload.ts in Electron; absent in a plain browser. */
    routerdesk?: PreloadBridge;
  }
}

/**
 * Resolves from the real window: strips a token or one-time code from history at once, exchanges the code for the
 * token, and keeps the token for reloads of this tab only. A refused code leaves the tab's kept token, if any.
 */
export async function connectFromWindow(win: Window): Promise<ResolvedConnection> {
  let stored: string | null = null;
  try {
    stored = win.sessionStorage.getItem(SESSION_KEY);
  } catch {
    // storage disabled (file:// in some shells): reloads will need the token again
  }
  const resolved = resolveConnection({ bridge: win.routerdesk, href: win.location.href, storedToken: stored });
  if (resolved.cleanHref !== null) win.history.replaceState(win.history.state, '', resolved.cleanHref);
  if (resolved.source === 'code' && resolved.code) {
    const answer = await exchangeCode(resolved.url, resolved.code, (input, init) => win.fetch(input, init));
    if ('error' in answer) console.warn(`routerdesk: ${answer.error}`);
    else resolved.token = answer.token;
  }
  if ((resolved.source === 'query' || resolved.source === 'code') && resolved.token) {
    try {
      win.sessionStorage.setItem(SESSION_KEY, resolved.token);
    } catch {
      // see above
    }
  }
  return resolved;
}

/**
 * Where the renderer finds its node. In Electron the preload exposes `window.routerdesk = {url, token}`.
 * Headless, the node serves this build at `/` and prints `http://host:port/?token=…` (as Jupyter does):
 * the node is the page's own origin, and the token is taken out of the address bar at once.
 */
export interface PreloadBridge {
  url?: string;
  token?: string;
}

export type ConnectionSource = 'preload' | 'query' | 'session' | 'none';

export interface ResolvedConnection {
  url: string;
  token: string;
  source: ConnectionSource;
  /** The address to put in history instead of the current one (token removed), or null to leave it. */
  cleanHref: string | null;
}

export const TOKEN_PARAM = 'token';
export const SESSION_KEY = 'routerdesk.console-token';

export function resolveConnection(input: { bridge?: PreloadBridge | null; href: string; storedToken?: string | null }): ResolvedConnection {
  const { bridge, href, storedToken } = input;
  if (bridge?.url) return { url: bridge.url.replace(/\/+$/, ''), token: bridge.token ?? '', source: 'preload', cleanHref: null };

  const location = new URL(href);
  const origin = location.origin;
  const fromQuery = location.searchParams.get(TOKEN_PARAM);
  if (fromQuery !== null) {
    location.searchParams.delete(TOKEN_PARAM);
    const cleanHref = `${location.pathname}${location.search}${location.hash}`;
    return { url: origin, token: fromQuery, source: 'query', cleanHref };
  }
  if (storedToken) return { url: origin, token: storedToken, source: 'session', cleanHref: null };
  return { url: origin, token: '', source: 'none', cleanHref: null };
}

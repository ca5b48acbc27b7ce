import { apiErrorBodySchema, consoleSessionSchema } from '../../src-router/contract';

/**
 * Where the renderer finds its node. In Electron the preload exposes `window.routerdesk = {url, token}`.
 * Headless, the node serves this build at `/`; a link `http://host:port/?code=…` carries a one-time code the page
 * exchanges for the token (`POST /router/v1/console/session`): `routerdesk serve` prints one and starts the browser
 * on an owner-only page that sends it to another, `routerdesk console-link` prints a fresh one, a Settings save that
 * moves the node follows it with one. A `?token=…` link (the demo prints one) works too. The node is the page's own
 * origin, and the code or token is taken out of the address bar at once.
 */
export interface PreloadBridge {
  url?: string;
  token?: string;
  /** How remote clusters' tokens are kept at rest (`tokenStorageSchema`), read by `bridgeTokenStorage`. */
  tokenStorage?: unknown;
}

export type ConnectionSource = 'preload' | 'query' | 'code' | 'session' | 'none';

export interface ResolvedConnection {
  url: string;
  token: string;
  source: ConnectionSource;
  /** The address to put in history instead of the current one (token or code removed), or null to leave it. */
  cleanHref: string | null;
  /** source `code`: the one-time code to exchange for the token (`token` is then the one kept for this tab, if any). */
  code?: string;
}

export const TOKEN_PARAM = 'token';
export const CODE_PARAM = 'code';
export const SESSION_PATH = '/router/v1/console/session';
export const SESSION_KEY = 'routerdesk.console-token';

export function resolveConnection(input: {
  bridge?: PreloadBridge | null;
  href: string;
  storedToken?: string | null;
}): ResolvedConnection {
  const { bridge, href, storedToken } = input;
  if (bridge?.url)
    return { url: bridge.url.replace(/\/+$/, ''), token: bridge.token ?? '', source: 'preload', cleanHref: null };

  const location = new URL(href);
  const origin = location.origin;
  const fromQuery = location.searchParams.get(TOKEN_PARAM);
  const code = location.searchParams.get(CODE_PARAM);
  location.searchParams.delete(TOKEN_PARAM);
  location.searchParams.delete(CODE_PARAM);
  const cleanHref = `${location.pathname}${location.search}${location.hash}`;
  if (fromQuery !== null) return { url: origin, token: fromQuery, source: 'query', cleanHref };
  if (code !== null) return { url: origin, token: storedToken ?? '', source: 'code', cleanHref, code };
  if (storedToken) return { url: origin, token: storedToken, source: 'session', cleanHref: null };
  return { url: origin, token: '', source: 'none', cleanHref: null };
}

/** Exchanges a one-time code for the console token; the node's refusal (a spent or expired code) as its message. */
export async function exchangeCode(
  url: string,
  code: string,
  fetchFn: (input: string, init?: RequestInit) => Promise<Response>,
): Promise<{ token: string } | { error: string }> {
  try {
    const res = await fetchFn(`${url}${SESSION_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    });
    const body: unknown = await res.json().catch(() => null);
    const ok = consoleSessionSchema.safeParse(body);
    if (res.ok && ok.success) return { token: ok.data.token };
    const refused = apiErrorBodySchema.safeParse(body);
    return {
      error: refused.success
        ? `${refused.data.error.message} (HTTP ${res.status})`
        : `the node answered HTTP ${res.status} to the one-time code`,
    };
  } catch (err) {
    return { error: `the one-time code could not be exchanged: ${(err as Error).message}` };
  }
}

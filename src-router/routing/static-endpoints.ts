/**
 * Static-route endpoints with credentials (`http://user:pass@host:port`): undici takes no user information from a
 * URL, so the node sends them as a Basic `Authorization` header to a URL without them, and everything that shows an
 * endpoint (the catalog, routed upstreams, scrape pods, logs, error messages) sees it with the password replaced by
 * `***`. An endpoint without user information is kept exactly as configured. Pure.
 */

export const HIDDEN_PASSWORD = '***';

/** One endpoint as the node calls it and as it shows it. */
export interface StaticEndpoint {
  /** What every view, log line and message shows: `http://user:***@host:port/path`, or the endpoint as configured. */
  shown: string;
  /** The URL the node calls: without user information. */
  url: string;
  /** `Basic …` from the URL's user and password, or null without user information. */
  authorization: string | null;
}

export type StaticRoutes = Readonly<Record<string, { engine?: string; endpoints: readonly string[] }>>;

const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*)@/i;

const decoded = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

export function staticEndpoint(configured: string): StaticEndpoint {
  const m = USERINFO.exec(configured);
  if (!m) return { shown: configured, url: configured, authorization: null };
  const url = configured.replace(USERINFO, '$1');
  let user = '';
  let password = '';
  try {
    const u = new URL(configured);
    user = decoded(u.username);
    password = decoded(u.password);
  } catch {
    const colon = m[2].indexOf(':');
    user = decoded(colon < 0 ? m[2] : m[2].slice(0, colon));
    password = colon < 0 ? '' : decoded(m[2].slice(colon + 1));
  }
  const shownUser = m[2].split(':')[0];
  return {
    shown: configured.replace(USERINFO, `$1${shownUser}:${HIDDEN_PASSWORD}@`),
    url,
    authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
  };
}

/** An endpoint as a client API's error message names it: no user information at all. */
export const endpointForClients = (shown: string): string => shown.replace(USERINFO, '$1');

/**
 * The static route table as the node shows it (every endpoint `shown`), and the way to call a shown endpoint. (Two
 * endpoints that differ only in their password would show the same: the config refuses that.)
 */
export function staticRouteTable(routes: StaticRoutes): {
  shown: StaticRoutes;
  call: (shown: string) => StaticEndpoint;
} {
  const byShown = new Map<string, StaticEndpoint>();
  const shown: Record<string, { engine?: string; endpoints: readonly string[] }> = {};
  for (const [model, route] of Object.entries(routes)) {
    const endpoints = route.endpoints.map((e) => {
      const ep = staticEndpoint(e);
      if (!byShown.has(ep.shown)) byShown.set(ep.shown, ep);
      return ep.shown;
    });
    shown[model] = { ...route, endpoints };
  }
  return {
    shown,
    call: (s) => byShown.get(s) ?? staticEndpoint(s),
  };
}

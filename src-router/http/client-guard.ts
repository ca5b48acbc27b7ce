import { isIP } from 'node:net';
import { hostname } from 'node:os';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RouterError } from '../contract';
import { authThrottle, bearer, sameSecret } from './auth';
import type { AuthThrottle } from './auth-throttle';
import { routePath, targetAuthority } from './route-path';

/**
 * Who may talk to this node at all, before any route runs:
 * - Host: a web page reaching the node through DNS rebinding sends a Host of the attacker's name. Accepted are IP
 *   literals (rebinding needs a name), `localhost` and `*.localhost`, this machine's host name, the host of
 *   `cluster.public_url`, and `server.allowed_hosts`; anything else gets 421.
 * - Origin: a browser request from another site (a cross-site form posting an upload, a script) gets 403 unless its
 *   Origin is the node's own (same host as the request) or listed in `server.cors_origins` (`*`: any); listed ones
 *   get CORS headers and their preflights are answered.
 *   An absolute-form request target (`GET http://name/v1/models`) names a host too: it must pass the same test.
 * - Client API keys: with `server.api_keys` set, the routes under `/v1/` and `/api/` need `Authorization: Bearer
 *   <key>`, compared in constant time (401 otherwise). The test is on the route the router matched, so no form of
 *   the request line (absolute-form, percent-encoded) reaches a client route around it. Wrong keys count in the same
 *   per-address throttle as every other token (`AuthThrottle`: 429 with Retry-After). Node and console APIs have
 *   their own tokens.
 */
export interface GuardOptions {
  allowedHosts: readonly string[];
  corsOrigins: readonly string[];
  publicUrl?: string | null;
  apiKeys: readonly string[];
}

/** `host[:port]` → lower-case host without port or IPv6 brackets. */
export function hostOnly(value: string): string {
  const v = value.trim().toLowerCase();
  if (v.startsWith('[')) return v.slice(1, v.indexOf(']') < 0 ? undefined : v.indexOf(']'));
  const colon = v.lastIndexOf(':');
  return colon > 0 && v.indexOf(':') === colon ? v.slice(0, colon) : v;
}

export function hostAllowed(host: string | undefined, o: GuardOptions, machine = hostname()): boolean {
  if (!host) return true; // HTTP/1.0 clients send none; browsers always do
  const h = hostOnly(host);
  if (isIP(h) || h === 'localhost' || h.endsWith('.localhost') || h === machine.toLowerCase()) return true;
  if (o.publicUrl) {
    try {
      if (hostOnly(new URL(o.publicUrl).host) === h) return true;
    } catch {
      /* a bad public_url is refused by the config */
    }
  }
  return o.allowedHosts.some((a) => hostOnly(a) === h);
}

/** The node's own origin (same host as the request), a listed one, or any with `*`. */
export function originAllowed(origin: string, host: string | undefined, o: GuardOptions): 'own' | 'listed' | false {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (host && url.host.toLowerCase() === host.trim().toLowerCase()) return 'own';
  if (
    o.corsOrigins.includes('*') ||
    o.corsOrigins.some((c) => c.replace(/\/+$/, '').toLowerCase() === origin.replace(/\/+$/, '').toLowerCase())
  )
    return 'listed';
  return false;
}

const clientApi = (url: string) => url.startsWith('/v1/') || url === '/v1' || url.startsWith('/api/');

export function installClientGuards(
  app: FastifyInstance,
  o: GuardOptions,
  throttle: AuthThrottle = authThrottle,
): void {
  // Computed once, not per request: this machine's name, and the extra hosts (public_url's among them).
  const machine = hostname();
  let publicHost: string | null = null;
  try {
    publicHost = o.publicUrl ? new URL(o.publicUrl).host : null;
  } catch {
    /* a bad public_url is refused by the config */
  }
  const fixed: GuardOptions = {
    ...o,
    publicUrl: null,
    allowedHosts: publicHost ? [...o.allowedHosts, publicHost] : o.allowedHosts,
  };
  // A callback hook, not an async one: no promise per request. A preflight answered here ends the request.
  app.addHook('onRequest', (request: FastifyRequest, reply, done) => {
    const refusal = guard(request, reply);
    if (refusal !== 'answered') done(refusal ?? undefined);
  });

  /** The refusal of a request, null to let it through, 'answered' when a CORS preflight was answered here. */
  function guard(request: FastifyRequest, reply: FastifyReply): RouterError | null | 'answered' {
    const host = request.headers.host;
    if (!hostAllowed(host, fixed, machine)) {
      return new RouterError(
        421,
        'misdirected_request',
        `Host '${host}' is not this node's name or address (list it in server.allowed_hosts)`,
        'invalid_request_error',
        'host',
      );
    }
    const authority = request.url.charCodeAt(0) === 47 ? undefined : targetAuthority(request.url);
    if (authority !== undefined && !hostAllowed(authority, fixed, machine)) {
      return new RouterError(
        421,
        'misdirected_request',
        `the request target's host '${authority}' is not this node's name or address (list it in server.allowed_hosts)`,
        'invalid_request_error',
        'host',
      );
    }
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== 'null') {
      const allowed = originAllowed(origin, host, o);
      if (!allowed)
        return new RouterError(
          403,
          'origin_not_allowed',
          `requests from the web page at ${origin} are not allowed (list it in server.cors_origins)`,
          'permission_error',
        );
      if (allowed === 'listed') {
        reply.header('access-control-allow-origin', origin);
        reply.header('vary', 'Origin');
        if (request.method === 'OPTIONS') {
          reply.header('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
          reply.header(
            'access-control-allow-headers',
            request.headers['access-control-request-headers'] ?? 'authorization, content-type',
          );
          reply.header('access-control-max-age', '600');
          reply.code(204).send();
          return 'answered';
        }
      }
    } else if (origin === 'null') {
      return new RouterError(
        403,
        'origin_not_allowed',
        'requests from an opaque origin (a sandboxed page, a file) are not allowed',
        'permission_error',
      );
    }
    if (o.apiKeys.length && clientApi(routePath(request)) && request.method !== 'OPTIONS') {
      const key = bearer(request);
      if (!o.apiKeys.some((k) => sameSecret(key, k))) {
        const wait = throttle.refuse(request.ip, key);
        if (wait > 0)
          return new RouterError(
            429,
            'too_many_failed_tokens',
            `too many wrong API keys from this address: try again in ${wait} s`,
            'rate_limit_error',
            null,
            { retry_after: String(wait) },
          );
        return new RouterError(
          401,
          'invalid_api_key',
          key ? 'Incorrect API key provided' : "You didn't provide an API key: send it as Authorization: Bearer <key>",
          'invalid_request_error',
        );
      }
    }
    return null;
  }
}

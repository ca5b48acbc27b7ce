import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { RouterError } from '../serve';
import { AuthThrottle } from './auth-throttle';
import type { HttpDeps } from './deps';

/** Compares two secrets in constant time (hashing first, so lengths leak nothing either). */
export function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length > 0;
}

export function bearer(request: FastifyRequest): string {
  const h = request.headers.authorization ?? '';
  return h.toLowerCase().startsWith('bearer ') ? h.slice(7).trim() : '';
}

/** Wrong tokens counted per client address, for every token check of this process (console and cluster tokens). */
export const authThrottle = new AuthThrottle();

/**
 * An onRequest hook that admits only requests carrying one of `tokens` as a Bearer token; others get 401 (logged)
 * before their body is read, whatever it holds. The token is compared first, in constant time: a right one always
 * passes. A wrong one from an address that sent too many different wrong tokens gets 429 with Retry-After instead,
 * until its window ends (`AuthThrottle`); a request without a token is no guess.
 */
export function requireToken(token: string | readonly string[], what: string, throttle: AuthThrottle = authThrottle) {
  const tokens = typeof token === 'string' ? [token] : token;
  return async (request: FastifyRequest) => {
    const given = bearer(request);
    if (tokens.some((t) => sameSecret(given, t))) return;
    const wait = throttle.refuse(request.ip, given);
    if (wait > 0)
      throw new RouterError(
        429,
        'too_many_failed_tokens',
        `too many wrong tokens from this address: try again in ${wait} s`,
        'rate_limit_error',
        null,
        { retry_after: String(wait) },
      );
    throw new RouterError(
      401,
      'unauthorized',
      `missing or wrong ${what} token (send it as Authorization: Bearer …)`,
      'authentication_error',
    );
  };
}

/**
 * Which roles may call a node-API route: a call to a node of another role is refused with 403 `wrong_role` (a master
 * never accepts pushed links or leases, a slave takes no registrations), whatever token it carries.
 */
export function allowRoles(
  role: 'standalone' | 'master' | 'slave',
  allowed: readonly ('standalone' | 'master' | 'slave')[],
  what: string,
): void {
  if (!allowed.includes(role))
    throw new RouterError(
      403,
      'wrong_role',
      `${what}: only a ${allowed.join(' or ')} takes this, and this node is a ${role}`,
      'permission_error',
    );
}

type OperatorDeps = Pick<HttpDeps, 'operators' | 'consoleToken' | 'writeGate'>;

/** An operator's console token (`console.operators`, `INFERENCE_ADMIN_EMAILS`; the console token when none are set). */
export function isOperator(deps: Pick<HttpDeps, 'operators' | 'consoleToken'>, request: FastifyRequest): boolean {
  const given = bearer(request);
  return deps.operators.length
    ? deps.operators.some((t) => sameSecret(given, t))
    : sameSecret(given, deps.consoleToken);
}

/** 403 `not_an_operator` unless the request carries an operator's token, naming what it may not do and the gate in force. */
export function requireOperator(deps: OperatorDeps, request: FastifyRequest, what: string): void {
  if (!isOperator(deps, request))
    throw new RouterError(
      403,
      'not_an_operator',
      `only operators (${deps.writeGate.operators}) can ${what}`,
      'permission_error',
    );
}

/**
 * A preHandler of site API writes (links, guardian settings): reads pass; a write needs an operator's console token
 * (the console token when no operators are configured), and a slave refuses it with 409 `code`: the master keeps
 * `what` and pushes it.
 */
export function siteWriteGate(
  deps: Pick<HttpDeps, 'role' | 'nodeId' | 'operators' | 'consoleToken' | 'writeGate'>,
  what: string,
  code: string,
) {
  return async (request: FastifyRequest) => {
    if (request.method === 'GET') return;
    requireOperator(deps, request, `change ${what}`);
    if (deps.role === 'slave')
      throw new RouterError(
        409,
        code,
        `${what} are kept by the master; node '${deps.nodeId}' is a slave and applies what its master pushes`,
      );
  };
}

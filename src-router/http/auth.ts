import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { RouterError } from '../serve';

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

/** A preHandler that admits only requests carrying one of `tokens` as a Bearer token; others get 401 and are logged. */
export function requireToken(token: string | readonly string[], what: string) {
  const tokens = typeof token === 'string' ? [token] : token;
  return async (request: FastifyRequest) => {
    const given = bearer(request);
    if (!tokens.some((t) => sameSecret(given, t))) {
      throw new RouterError(401, 'unauthorized', `missing or wrong ${what} token (send it as Authorization: Bearer …)`, 'authentication_error');
    }
  };
}

import type { FastifyRequest } from 'fastify';

/**
 * The path a request is decided on: the pattern of the route the router matched (`/v1/models`,
 * `/router/v1/console/clusters/:id/*`), whatever form the request line took — absolute-form
 * (`GET http://x/v1/models`), percent-encoded, or with a query. A request no route matched is decided on its
 * target's path in origin form. Guards and error shapes read this, never `request.url`.
 */
export function routePath(request: FastifyRequest): string {
  const matched = request.routeOptions.url;
  if (matched !== undefined) return matched;
  return targetPath(request.url);
}

/** The path of a request target in origin form: `http://x/v1/a?b` and `/v1/a?b` both give `/v1/a`. */
export function targetPath(target: string): string {
  if (target.startsWith('/')) {
    const end = target.search(/[?#]/);
    return end < 0 ? target : target.slice(0, end);
  }
  try {
    return new URL(target).pathname;
  } catch {
    return target;
  }
}

/** The authority of an absolute-form request target (`http://host:port/…` → `host:port`), undefined otherwise. */
export function targetAuthority(target: string): string | undefined {
  if (target.startsWith('/')) return undefined;
  try {
    return new URL(target).host;
  } catch {
    return undefined;
  }
}

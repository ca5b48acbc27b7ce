import type { FastifyInstance, RouteOptions } from 'fastify';
import { docsPage } from './docs-page';
import { openApiDocument } from './document';
import type { Method } from './operations';

/**
 * The API document: `GET /openapi.json` (OpenAPI 3.1) and `GET /docs` (the same as a page). Public like `/health`
 * and `/metrics`: it describes the routes and their tokens, never a secret, and the Host and Origin checks still apply.
 */
export async function openApiRoutes(app: FastifyInstance, version: string): Promise<void> {
  // Both answers are made once, on first request: the document is static for a build.
  let json: string | undefined;
  let page: string | undefined;
  app.get('/openapi.json', async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send((json ??= JSON.stringify(openApiDocument(version)))),
  );
  app.get('/docs', async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send((page ??= docsPage(openApiDocument(version)))),
  );
}

/** A route as fastify registered it. */
export interface RegisteredRoute {
  method: Method | string;
  path: string;
  /** Why it is not in the API document (`config.undocumented`), when it is left out on purpose. */
  undocumented?: string;
}

const ROUTES = new WeakMap<FastifyInstance, RouteOptions[]>();

/** Records every route registered on `app` from now on. */
export function recordRoutes(app: FastifyInstance): void {
  const routes: RouteOptions[] = [];
  ROUTES.set(app, routes);
  app.addHook('onRoute', (route: RouteOptions) => {
    routes.push(route);
  });
}

/**
 * The routes recorded on `app`, one per method (empty unless `recordRoutes` ran before they were registered). Read
 * after registration: a scope's own onRoute hook, which runs after this one, may still mark a route undocumented.
 */
export function registeredRoutes(app: FastifyInstance): RegisteredRoute[] {
  return (ROUTES.get(app) ?? []).flatMap((route) => {
    const undocumented = (route.config as { undocumented?: string } | undefined)?.undocumented;
    return [route.method]
      .flat()
      .map((method) => ({ method, path: route.url, ...(undocumented ? { undocumented } : {}) }));
  });
}

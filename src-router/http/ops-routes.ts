import { existsSync } from 'node:fs';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import type { HealthAnswer } from '../contract';
import type { HttpDeps } from './deps';
import { STATIC_FILES_REASON } from './openapi/operations';

/** Liveness, the router's Prometheus metrics, and the UI build. */
export async function opsRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  app.get(
    '/health',
    async (): Promise<HealthAnswer> => ({
      status: 'ok',
      node_id: deps.nodeId,
      role: deps.role,
      version: deps.version,
      uptime_s: Math.round((Date.now() - deps.startedAt.getTime()) / 1000),
      started_at: deps.startedAt.toISOString(),
    }),
  );

  app.get('/metrics', async (_request, reply) => {
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });

  if (deps.uiDir && existsSync(deps.uiDir)) {
    const uiDir = deps.uiDir;
    // One route per file of the build: marked so the API document leaves them out (`openapi/operations.ts`).
    await app.register(async (scope) => {
      scope.addHook('onRoute', (route) => {
        route.config = { ...(route.config as object), undocumented: STATIC_FILES_REASON } as typeof route.config;
      });
      await scope.register(fastifyStatic, { root: uiDir, prefix: '/', index: ['index.html'], wildcard: false });
    });
  }
}

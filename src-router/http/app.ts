import multipart from '@fastify/multipart';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { assetRoutes } from './asset-routes';
import { consoleRoutes } from './console-routes';
import { nodeRoutes } from './node-routes';
import { runtimeRoutes } from './runtime-routes';
import { lendingRoutes } from './lending-routes';
import { siteRoutes } from './site-routes';
import { decisionRoutes } from './decision-routes';
import type { HttpDeps } from './deps';
import { installErrorHandling } from './errors';
import { ollamaRoutes } from './ollama-routes';
import { openaiRoutes } from './openai-routes';
import { opsRoutes } from './ops-routes';

export interface AppOptions {
  logLevel?: string;
}

/** Builds the node's HTTP app: the same instance for the server and for tests. */
export async function buildApp(deps: HttpDeps, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: deps.bodyLimit,
    logger: { level: opts.logLevel ?? process.env.ROUTERDESK_LOG_LEVEL ?? 'info' },
    logController: new LogController({ disableRequestLogging: process.env.ROUTERDESK_LOG_REQUESTS !== '1' }),
    forceCloseConnections: true,
  });
  installErrorHandling(app);
  await app.register(async (scope) => {
    await scope.register(multipart, { limits: { fileSize: deps.uploadLimit, files: 1, fields: 20, fieldSize: 1024 * 1024 }, throwFileSizeLimit: true });
    await opsRoutes(scope, deps);
    await openaiRoutes(scope, deps);
    await ollamaRoutes(scope, deps);
    await consoleRoutes(scope, deps);
    await nodeRoutes(scope, deps);
    await runtimeRoutes(scope, deps);
    await lendingRoutes(scope, deps);
    await siteRoutes(scope, deps);
    await decisionRoutes(scope, deps);
    await assetRoutes(scope, deps);
  });
  return app;
}

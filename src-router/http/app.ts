import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { RouterError } from '../contract';
import { CLIENT_API_PATH, defaultAnswerHeaders } from './answer-headers';
import { assetRoutes } from './asset-routes';
import { benchRoutes } from './bench-routes';
import { installClientGuards } from './client-guard';
import { clusterRoutes } from './cluster-routes';
import { consoleRoutes } from './console-routes';
import { decisionRoutes } from './decision-routes';
import type { HttpDeps } from './deps';
import { installErrorHandling } from './errors';
import { guardianRoutes } from './guardian-routes';
import { keepRawJson } from './json-body';
import { lendingRoutes } from './lending-routes';
import { modelConfigRoutes } from './model-config-routes';
import { modelFileRoutes } from './model-file-routes';
import { nodeRoutes } from './node-routes';
import { ollamaRoutes } from './ollama-routes';
import { openaiRoutes } from './openai-routes';
import { openApiRoutes, recordRoutes } from './openapi/routes';
import { opsRoutes } from './ops-routes';
import { redactUrl } from './redact';
import { replayRoutes } from './replay-routes';
import { responsesRoutes } from './responses-routes';
import { routePath } from './route-path';
import { runtimeRoutes } from './runtime-routes';
import { installSecurityHeaders } from './security-headers';
import { settingsRoutes } from './settings-routes';
import { siteRoutes } from './site-routes';
import { timelineRoutes } from './timeline-routes';
import { installWriteTimeout } from './write-out';

export interface AppOptions {
  logLevel?: string;
  /** server.keep_alive_timeout, server.request_timeout, server.headers_timeout */
  keepAliveTimeoutMs?: number;
  requestTimeoutMs?: number;
  headersTimeoutMs?: number;
}

/** Builds the node's HTTP app: the same instance for the server and for tests. */
export async function buildApp(deps: HttpDeps, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: deps.bodyLimit,
    logger: {
      level: opts.logLevel ?? process.env.ROUTERDESK_LOG_LEVEL ?? 'info',
      // Request lines never carry a secret from the query string (the UI link's console token).
      serializers: {
        req: (req: { method?: string; url?: string; id?: string }) => ({
          method: req.method,
          url: redactUrl(req.url ?? ''),
          id: req.id,
        }),
      },
    },
    logController: new LogController({ disableRequestLogging: process.env.ROUTERDESK_LOG_REQUESTS !== '1' }),
    forceCloseConnections: true,
    keepAliveTimeout: opts.keepAliveTimeoutMs ?? 72_000,
    requestTimeout: opts.requestTimeoutMs ?? 300_000,
  });
  // A client that never finishes its headers does not hold a connection (slowloris).
  app.server.headersTimeout = opts.headersTimeoutMs ?? 30_000;
  // Every route is recorded as registered: a test holds them against the API document's operations.
  recordRoutes(app);
  installErrorHandling(app);
  keepRawJson(app);
  installSecurityHeaders(app);
  installWriteTimeout(app, deps.writeTimeoutMs);
  installClientGuards(app, deps.guards);
  // One value per query key: a repeated key (`?limit=1&limit=2`) is ambiguous, so it is refused with its name.
  // These global hooks take callbacks, not async functions: no promise per request.
  app.addHook('preValidation', (request, _reply, done) => {
    const q = request.query;
    if (q && typeof q === 'object') {
      for (const key in q) {
        const value = (q as Record<string, unknown>)[key];
        if (Array.isArray(value))
          return done(
            new RouterError(
              400,
              'invalid_request',
              `query parameter '${key}' is given ${value.length} times: give it once`,
              'invalid_request_error',
              key,
            ),
          );
      }
    }
    done();
  });
  // Every answer of the client APIs names the node that ran it (an executor's answer sets its own).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (CLIENT_API_PATH.test(routePath(request))) defaultAnswerHeaders(reply, deps.nodeId);
    done(null, payload);
  });
  await app.register(async (scope) => {
    await scope.register(multipart, {
      limits: { fileSize: deps.uploadLimit, files: 1, fields: 20, fieldSize: 1024 * 1024 },
      throwFileSizeLimit: true,
    });
    await opsRoutes(scope, deps);
    await openApiRoutes(scope, deps.version);
    await openaiRoutes(scope, deps);
    await responsesRoutes(scope, deps);
    await ollamaRoutes(scope, deps);
    await consoleRoutes(scope, deps);
    await benchRoutes(scope, deps);
    await nodeRoutes(scope, deps);
    await runtimeRoutes(scope, deps);
    await lendingRoutes(scope, deps);
    await siteRoutes(scope, deps);
    await guardianRoutes(scope, deps);
    await decisionRoutes(scope, deps);
    await timelineRoutes(scope, deps);
    await replayRoutes(scope, deps);
    await assetRoutes(scope, deps);
    await clusterRoutes(scope, deps);
    await settingsRoutes(scope, deps);
    await modelFileRoutes(scope, deps);
    await modelConfigRoutes(scope, deps);
  });
  return app;
}

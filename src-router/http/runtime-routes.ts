import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RouterError, setRoutingRequestSchema } from '../contract';
import { checkWriteGate } from '../routing';
import { bearer, isOperator, requireToken, sameSecret } from './auth';
import type { HttpDeps } from './deps';
import { parseBody } from './errors';

/**
 * The Runtime screen's procedures: `runtime.health` reads only the blob (RT-1); `runtime.routing` and
 * `runtime.setRouting` read and write desired routing state (ROUTE-1, 3, 5..8); routed upstreams (ROUTE-9).
 */
export async function runtimeRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  /** The e-mail of the operator whose token this is (`INFERENCE_ADMIN_EMAILS`), for the write's log line. */
  const operatorEmail = (request: FastifyRequest) =>
    deps.operatorEmails.find((o) => sameSecret(bearer(request), o.token))?.email ?? null;
  const access = (request: FastifyRequest) => ({
    writable: deps.routingWritesEnabled,
    canWrite: isOperator(deps, request),
  });

  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken([deps.consoleToken, ...deps.operators], 'console'));

    scope.get<{ Querystring: { node?: string } }>('/router/v1/console/runtime.health', async (request) => {
      const node = request.query.node;
      if (!node || node === deps.nodeId) return deps.runtimeHealth();
      // An unknown node is a 404 (RouterError); a known one that cannot answer publishes nothing we can read (RT-1),
      // the same answer as a keyspace that cannot answer, with the reason.
      return deps.remoteRuntimeHealth(node).catch((err: Error) => {
        if (err instanceof RouterError) throw err;
        return { published: false as const, reason: `node '${node}' did not answer: ${err.message}` };
      });
    });

    scope.get('/router/v1/console/runtime.routing', async (request) => ({
      ...(await deps.routing.live.routingView(access(request))),
      gate: deps.writeGate,
      status: deps.routing.live.status(),
    }));

    scope.post('/router/v1/console/runtime.setRouting', async (request, reply) => {
      const refusal = checkWriteGate(access(request), deps.writeGate);
      if (refusal) throw new RouterError(403, refusal.code, refusal.message, 'permission_error', refusal.gate);
      const input = parseBody(setRoutingRequestSchema, request.body);
      const result = await deps.routing.live.setRouting(input).catch((err: Error) => {
        throw new RouterError(503, 'keyspace_unavailable', `routing state not written: ${err.message}`);
      });
      if (!result.ok)
        return reply.status(400).send({
          error: {
            message: result.message,
            type: 'invalid_request_error',
            param: result.field,
            code: 'invalid_routing',
          },
        });
      request.log.info(
        { desired: result.desired, operator: operatorEmail(request) },
        'routing desired state published',
      );
      return { desired: result.desired };
    });

    scope.get('/router/v1/console/runtime.upstreams', async () => ({ upstreams: deps.routing.upstreams() }));

    scope.get('/router/v1/console/runtime.scrape', async () => ({ pods: deps.routing.scraper.records() }));
  });
}

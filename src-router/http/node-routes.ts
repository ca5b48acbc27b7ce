import type { FastifyInstance } from 'fastify';
import { AnswerTooLarge, fetchAnswer, VIEW_LIMIT } from '../backends/answer-limits';
import { SNAPSHOT_LIMIT } from '../cluster/node-client';
import { nodeSnapshotSchema } from '../contract';
import { RouterError, tooLarge } from '../serve';
import { allowRoles, requireToken } from './auth';
import type { HttpDeps } from './deps';
import { parsePeerBody } from './errors';
import { openaiRoutes } from './openai-routes';

/** The node API (`/router/v1/node/*`): cluster token only (401 otherwise, logged). */
export async function nodeRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  await app.register(async (scope) => {
    scope.addHook('onRequest', requireToken(deps.clusterToken, 'cluster'));

    // A registration carries a snapshot: bounded like the master's own read of one.
    scope.post('/router/v1/node/register', { bodyLimit: SNAPSHOT_LIMIT }, async (request) => {
      if (!deps.membership)
        throw new RouterError(
          404,
          'not_a_master',
          `node '${deps.nodeId}' is a ${deps.role}, not a master: it takes no registrations`,
        );
      const snapshot = parsePeerBody(nodeSnapshotSchema, request.body);
      const { masterId } = deps.membership.register(snapshot);
      return { accepted: true, masterId, syncIntervalMs: 0 };
    });

    scope.get('/router/v1/node/snapshot', async () => deps.snapshot());

    // LEASE-1, GUARD-1: a slave reads the links and guardian settings it runs from its master (a push only nudges it).
    scope.get<{ Querystring: { node?: string } }>('/router/v1/node/master-settings', async (request) => {
      allowRoles(deps.role, ['master'], 'settings reads');
      const node = request.query.node;
      if (typeof node !== 'string' || !node || node.length > 200)
        throw new RouterError(
          400,
          'invalid_request',
          'node: the node ID of the slave that reads',
          'invalid_request_error',
          'node',
        );
      return deps.masterSettings(node);
    });

    scope.get('/router/v1/node/runtime-status', async () => deps.runtimeStatus());

    scope.get('/router/v1/node/runtime-health', async () => deps.runtimeHealth());

    // A master scrapes this node's engines through here (their ports are not exposed).
    scope.get<{ Params: { localId: string } }>('/router/v1/node/engine-metrics/:localId', async (request, reply) => {
      const lane = deps.supervisor
        .laneStatus()
        .find((l) => l.loaded === request.params.localId && l.state === 'ready' && l.port);
      if (!lane)
        throw new RouterError(
          404,
          'engine_not_running',
          `no running engine for '${request.params.localId}' on node '${deps.nodeId}'`,
        );
      const res = await fetch(`http://127.0.0.1:${lane.port}/metrics`, { signal: AbortSignal.timeout(2000) }).catch(
        (err: Error) => {
          throw new RouterError(502, 'engine_unreachable', `engine metrics unreachable: ${err.message}`);
        },
      );
      const text = await fetchAnswer(res)
        .text(VIEW_LIMIT)
        .catch((err: Error) => {
          throw err instanceof AnswerTooLarge
            ? tooLarge(err, `the engine of '${request.params.localId}'`)
            : new RouterError(502, 'engine_unreachable', `engine metrics broke off: ${err.message}`);
        });
      return reply
        .status(res.status)
        .type(res.headers.get('content-type') ?? 'text/plain')
        .send(text);
    });
  });

  await app.register(
    async (scope) => {
      scope.addHook('onRequest', requireToken(deps.clusterToken, 'cluster'));
      await openaiRoutes(scope, deps, { worker: true });
    },
    { prefix: '/router/v1/node/worker' },
  );
}

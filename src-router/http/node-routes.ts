import type { FastifyInstance } from 'fastify';
import { nodeSnapshotSchema } from '../contract';
import { RouterError } from '../serve';
import { requireToken } from './auth';
import type { HttpDeps } from './deps';
import { parseBody } from './errors';
import { openaiRoutes } from './openai-routes';

/** The node API (`/router/v1/node/*`): cluster token only (401 otherwise, logged). */
export async function nodeRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  await app.register(async (scope) => {
    scope.addHook('preHandler', requireToken(deps.clusterToken, 'cluster'));

    scope.post('/router/v1/node/register', async (request) => {
      if (!deps.membership) throw new RouterError(404, 'not_a_master', `node '${deps.nodeId}' is a ${deps.role}, not a master: it takes no registrations`);
      const snapshot = parseBody(nodeSnapshotSchema, request.body);
      const { masterId } = deps.membership.register(snapshot);
      return { accepted: true, masterId, syncIntervalMs: 0 };
    });

    scope.get('/router/v1/node/snapshot', async () => deps.snapshot());

    scope.get('/router/v1/node/runtime-status', async () => deps.runtimeStatus());
  });

  await app.register(
    async (scope) => {
      scope.addHook('preHandler', requireToken(deps.clusterToken, 'cluster'));
      await openaiRoutes(scope, deps, { worker: true });
    },
    { prefix: '/router/v1/node/worker' },
  );
}

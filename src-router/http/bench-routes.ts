import type { FastifyInstance } from 'fastify';
import { benchRunListQuerySchema, RouterError } from '../contract';
import { requireToken } from './auth';
import type { HttpDeps } from './deps';

/** ASSET-1: benchmark runs kept in this node's store by `routerdesk bench --store`, newest first, and one run's rows. */
export async function benchRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken([deps.consoleToken, ...deps.operators], 'console'));

    scope.get('/router/v1/console/bench/runs', async (request) => {
      const q = benchRunListQuerySchema.safeParse(request.query);
      if (!q.success)
        throw new RouterError(
          400,
          'invalid_query',
          `limit: ${q.error.issues[0]?.message ?? 'invalid'} (1–500)`,
          'invalid_request_error',
          'limit',
        );
      return { runs: deps.benchRuns.list(q.data.limit) };
    });

    scope.get<{ Params: { id: string } }>('/router/v1/console/bench/runs/:id', async (request) => {
      const run = deps.benchRuns.get(request.params.id);
      if (!run)
        throw new RouterError(
          404,
          'bench_run_not_found',
          `no benchmark run '${request.params.id}' in this node's store`,
        );
      return run;
    });
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  assetResponseHead,
  type BindingResult,
  checkRecipe,
  parseRangeHeader,
  parseRecipe,
  recipeClusterView,
} from '../cluster/assets';
import { assetFetchRequestSchema, nodeLoadRequestSchema, RouterError } from '../contract';
import { requireOperator, requireToken } from './auth';
import type { HttpDeps } from './deps';
import { parseBody, parsePeerBody } from './errors';
import { routePath } from './route-path';

const RECIPES = '/router/v1/site/recipes';

/**
 * Assets and split recipes (ASSET-2..4). Node API (cluster token): assets by verified hash with ranges, the
 * inventory of the file roots, loading a local config. Console API: this node's inventory, bindings, fetching an
 * asset from a node of the relationship. Site API: recipes (kept on the master or a standalone node) and their
 * explicit loading. Console writes need an operator's token.
 */
export async function assetRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  const assets = deps.assets;

  await app.register(async (scope) => {
    scope.addHook('onRequest', requireToken(deps.clusterToken, 'cluster'));

    // HEAD is its own route: fastify's automatic one would read a whole stream only to drop it.
    const byHash =
      (withBody: boolean) => async (request: FastifyRequest<{ Params: { sha256: string } }>, reply: FastifyReply) => {
        const asset = await assets.open(request.params.sha256);
        const header = request.headers.range;
        if (header) reply.header('content-range', `bytes */${asset.size}`); // replaced below unless the range is refused (416)
        const range = parseRangeHeader(header, asset.size);
        const head = assetResponseHead(asset, range);
        reply.status(head.status).headers(head.headers);
        return withBody ? reply.send(await asset.stream(range)) : reply.send();
      };
    scope.head('/router/v1/node/assets/by-hash/:sha256', byHash(false));
    scope.get('/router/v1/node/assets/by-hash/:sha256', { exposeHeadRoute: false }, byHash(true));

    scope.get<{ Querystring: { root?: string; path?: string } }>('/router/v1/node/assets/inventory', async (request) =>
      inventory(deps, request.query),
    );

    scope.post('/router/v1/node/load', async (request) => {
      const { localId } = parsePeerBody(nodeLoadRequestSchema, request.body);
      if (!deps.registry.byLocalId(localId))
        throw new RouterError(
          404,
          'model_not_found',
          `no local model '${localId}' on node '${deps.nodeId}'`,
          'invalid_request_error',
          'localId',
        );
      const started = Date.now();
      await deps.supervisor.preload(localId);
      request.log.info({ localId }, 'model loaded on request of the cluster');
      return { nodeId: deps.nodeId, localId, state: deps.supervisor.state(localId), durationMs: Date.now() - started };
    });
  });

  await app.register(async (scope) => {
    scope.addHook('onRequest', requireToken([deps.consoleToken, ...deps.operators], 'console'));
    scope.addHook('preHandler', async (request) => {
      if (request.method === 'GET' || request.method === 'HEAD') return;
      requireOperator(deps, request, 'fetch assets or change recipes');
      if (routePath(request).startsWith(RECIPES) && deps.role === 'slave') {
        throw new RouterError(
          409,
          'recipes_on_master',
          `recipes are kept by the master; node '${deps.nodeId}' is a slave`,
        );
      }
    });

    scope.get<{ Querystring: { root?: string; path?: string } }>(
      '/router/v1/console/assets/inventory',
      async (request) => inventory(deps, request.query),
    );

    scope.get<{ Querystring: { sha256?: string; result?: string; limit?: string } }>(
      '/router/v1/console/assets/bindings',
      async (request) => {
        const { sha256, result, limit } = request.query;
        if (result !== undefined && !['bound', 'substituted', 'rejected'].includes(result))
          throw new RouterError(
            400,
            'invalid_request',
            'result: bound, substituted or rejected',
            'invalid_request_error',
            'result',
          );
        return {
          bindings: assets.bindings.list({
            sha256: sha256?.toLowerCase(),
            result: result as BindingResult | undefined,
            limit: limit ? Number(limit) || 100 : 100,
          }),
        };
      },
    );

    scope.post('/router/v1/console/assets/fetch', async (request) => {
      const body = parseBody(assetFetchRequestSchema, request.body);
      const result = await assets.fetch(body);
      request.log.info(
        { sha256: result.sha256, from: body.nodeId ?? body.url, result: result.result, bytes: result.downloaded },
        'asset fetched',
      );
      return result;
    });

    scope.get(RECIPES, async () => ({ recipes: assets.recipes.list() }));

    scope.get<{ Params: { name: string } }>(`${RECIPES}/:name`, async (request) =>
      assets.recipes.require(request.params.name),
    );

    scope.put<{ Params: { name: string } }>(`${RECIPES}/:name`, async (request, reply) => {
      const body = request.body;
      if (body === null || typeof body !== 'object' || Array.isArray(body))
        throw new RouterError(400, 'invalid_request', 'request body must be a JSON object');
      const given = (body as { name?: unknown }).name;
      if (given !== undefined && given !== request.params.name)
        throw new RouterError(
          400,
          'invalid_recipe',
          `name '${String(given)}' differs from the URL's '${request.params.name}'`,
          'invalid_request_error',
          'name',
        );
      const recipe = parseRecipe({ ...body, name: request.params.name });
      const problems = checkRecipe(
        recipe,
        recipeClusterView(deps.catalog.all(), {
          localNodeId: deps.nodeId,
          routingOnlyMaster: deps.role === 'master' && deps.registry.all().length === 0,
          publicIds: [
            ...deps.catalog.all().map((e) => e.id),
            ...deps.staticRouteIds,
            ...deps.registry.all().map((r) => r.localId),
          ],
        }),
      );
      if (problems.length) return invalidRecipe(reply, recipe.name, problems);
      const { recipe: saved, created } = assets.recipes.put(recipe);
      request.log.info(
        { recipe: saved.name, components: saved.components.length },
        created ? 'recipe created' : 'recipe replaced',
      );
      return reply.status(created ? 201 : 200).send(saved);
    });

    scope.delete<{ Params: { name: string } }>(`${RECIPES}/:name`, async (request, reply) => {
      if (!assets.recipes.delete(request.params.name))
        throw new RouterError(
          404,
          'recipe_not_found',
          `no recipe '${request.params.name}'`,
          'invalid_request_error',
          'name',
        );
      return reply.status(204).send();
    });

    scope.post<{ Params: { name: string } }>(`${RECIPES}/:name/load`, async (request, reply) => {
      const recipe = assets.recipes.require(request.params.name);
      const result = await assets.loadRecipe(recipe);
      request.log.info({ recipe: recipe.name, ok: result.ok }, 'recipe loaded');
      if (result.ok) return result;
      const failed = result.components.filter((c) => c.status === 'failed');
      const message = `recipe '${recipe.name}': ${failed.map((c) => `${c.model} on ${c.nodeId}: ${c.error}`).join('; ')}`;
      return reply
        .status(502)
        .send({ ...result, error: { message, type: 'server_error', param: null, code: 'recipe_load_failed' } });
    });
  });
}

async function inventory(deps: HttpDeps, q: { root?: string; path?: string }) {
  return { nodeId: deps.nodeId, ...(await deps.assets.inventory(q.root || undefined, q.path)) };
}

/** 400 naming every problem (the usual error shape, plus `problems`). */
function invalidRecipe(reply: FastifyReply, name: string, problems: { path: string; message: string }[]) {
  const message = `recipe '${name}': ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`;
  return reply.status(400).send({
    error: { message, type: 'invalid_request_error', param: problems[0].path, code: 'invalid_recipe', problems },
  });
}

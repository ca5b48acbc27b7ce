import type { FastifyInstance } from 'fastify';
import { RouterError } from '../contract';
import {
  LINK_LANE_PATHS,
  linkCandidates,
  linkCreateSchema,
  linkErrorToRouterError,
  linkUpdateSchema,
  patchFromUpdate,
  toLinkRecord,
  validateLink,
} from '../lending/links';
import type { LendingLane } from '../lending/types';
import { requireToken, siteWriteGate } from './auth';
import type { HttpDeps } from './deps';
import { parseBody } from './errors';

/**
 * The site API of links (LINK-1..4): image links under /router/v1/site/routing-groups, LLM links under
 * /router/v1/site/text-routing-groups. Reads with any console token; writes need an operator's (the console token
 * when no operators are configured). Links live on the master (or a standalone node) and are pushed to slaves.
 */
export async function siteRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken([deps.consoleToken, ...deps.operators], 'console'));
    scope.addHook('preHandler', siteWriteGate(deps, 'links', 'links_on_master'));
    const store = () => deps.lendingHttp.links;

    for (const [lane, path] of Object.entries(LINK_LANE_PATHS) as [LendingLane, string][]) {
      scope.get(path, async () => ({ version: store().version(), links: store().list(lane).map(toLinkRecord) }));

      scope.post(path, async (request, reply) => {
        const input = parseBody(linkCreateSchema, request.body);
        const result = validateLink(input, lane, deps.catalog.all(), store().list());
        if (!result.ok) throw linkErrorToRouterError(result.error);
        const link = store().create(result.value);
        request.log.info({ link: link.id, lane, owner: link.owner, helper: link.helper }, 'link created');
        deps.lendingHttp.linksChanged();
        return reply.status(201).send(toLinkRecord(link));
      });

      scope.put<{ Params: { id: string } }>(`${path}/:id`, async (request) => {
        const patch = patchFromUpdate(parseBody(linkUpdateSchema, request.body));
        const existing = store().get(request.params.id);
        if (!existing || existing.lane !== lane)
          throw new RouterError(404, 'link_not_found', `no ${lane} link '${request.params.id}'`);
        const link = store().update(request.params.id, patch)!;
        deps.lendingHttp.linksChanged();
        return toLinkRecord(link);
      });

      scope.delete<{ Params: { id: string } }>(`${path}/:id`, async (request, reply) => {
        const existing = store().get(request.params.id);
        if (!existing || existing.lane !== lane)
          throw new RouterError(404, 'link_not_found', `no ${lane} link '${request.params.id}'`);
        store().delete(request.params.id);
        deps.lendingHttp.linksChanged();
        return reply.status(204).send();
      });

      // The picker (UI-3): every candidate of the lane, ineligible ones disabled with the reason.
      scope.get<{ Querystring: { node?: string; model?: string; role?: 'owner' | 'helper' } }>(
        `${path}/candidates`,
        async (request) => {
          const { node, model, role } = request.query;
          if (!node || !model)
            throw new RouterError(
              400,
              'invalid_request',
              'node and model (the anchor) are required',
              'invalid_request_error',
              node ? 'model' : 'node',
            );
          const result = linkCandidates(
            { nodeId: node, model },
            lane,
            deps.catalog.all(),
            store().list(),
            role === 'helper' ? 'helper' : 'owner',
          );
          if (!result.ok) throw linkErrorToRouterError(result.error);
          return result.value;
        },
      );
    }
  });
}

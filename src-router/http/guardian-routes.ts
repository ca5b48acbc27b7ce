import type { FastifyInstance } from 'fastify';
import {
  type GuardiansView,
  guardianDeleteSchema,
  guardianPutSchema,
  guardiansPushSchema,
  RouterError,
} from '../contract';
import { type GuardianStore, scopeKeyOf, toGuardianSetting, validateGuardianSetting } from '../guardian';
import { allowRoles, requireToken, siteWriteGate } from './auth';
import type { HttpDeps } from './deps';
import { parseBody, parsePeerBody } from './errors';
import { nudgedByPush } from './settings-nudge';

/** What the guardian routes are given (node-guardians.ts). */
export interface GuardiansHttp {
  store: GuardianStore;
  /** The GET view: settings, the effective guardian of every text-only model, candidates, nodes. */
  view(): GuardiansView;
  /** After a site API change: read the store again and push to every slave (LEASE-1). */
  changed(): void;
  version(): number;
}

const PATH = '/router/v1/site/guardians';

/**
 * Guardian settings (GUARD-1, UI-4). Site API on the master or a standalone node: reads with any console token,
 * writes need an operator's, a slave refuses writes (409). Node API: the master's push to a slave (cluster token), a
 * nudge to read the settings from its configured master.
 */
export async function guardianRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  // Read per request: createNode fills deps.guardians after the app is built.
  const g = () => deps.guardians;
  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken([deps.consoleToken, ...deps.operators], 'console'));
    scope.addHook('preHandler', siteWriteGate(deps, 'guardian settings', 'guardians_on_master'));

    scope.get(PATH, async () => g().view());

    scope.put(PATH, async (request) => {
      const input = parseBody(guardianPutSchema, request.body);
      const result = validateGuardianSetting(input, deps.catalog.all());
      if (!result.ok)
        throw new RouterError(
          400,
          result.error.code,
          result.error.message,
          'invalid_request_error',
          result.error.field,
        );
      const stored = g().store.put(result.value);
      request.log.info(
        { scope: stored.scope, nodeId: stored.nodeId, model: stored.model, guardian: stored.guardian },
        'guardian set',
      );
      g().changed();
      return toGuardianSetting(stored);
    });

    scope.delete(PATH, async (request, reply) => {
      const key = scopeKeyOf(parseBody(guardianDeleteSchema, request.body));
      if (!g().store.delete(key)) {
        const what =
          key.scope === 'cluster'
            ? 'no cluster guardian is set'
            : key.scope === 'node'
              ? `no guardian is set for node '${key.nodeId}'`
              : `no guardian is set for model '${key.model}' on node '${key.nodeId}'`;
        throw new RouterError(404, 'guardian_setting_not_found', what);
      }
      request.log.info({ scope: key.scope, nodeId: key.nodeId, model: key.model }, 'guardian removed');
      g().changed();
      return reply.status(204).send();
    });
  });

  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken(deps.clusterToken, 'cluster'));
    scope.post('/router/v1/node/guardians', async (request) => {
      // Guardian settings are the master's to decide (LEASE-1): it never takes them from a peer.
      allowRoles(deps.role, ['slave'], 'guardian setting pushes');
      return nudgedByPush(deps, request, 'guardians', parsePeerBody(guardiansPushSchema, request.body));
    });
  });
}

import type { FastifyInstance } from 'fastify';
import { describeEngines } from '../backends/engine-binaries';
import { sourcedCatalog } from '../cluster/catalog-sources';
import {
  type ConsoleCode,
  type ConsoleModelList,
  type ConsoleSession,
  consoleCodeRequestSchema,
  consoleSessionRequestSchema,
  type EnginesAnswer,
  enginesAnswerSchema,
} from '../contract';
import { RouterError } from '../serve';
import { authThrottle, requireToken } from './auth';
import { CONSOLE_CODE_TTL_MS } from './console-codes';
import type { HttpDeps } from './deps';
import { parseBody } from './errors';

/** The console API the UI calls (`/router/v1/console/*`), behind the console token. */
export async function consoleRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  // The one console route without the token: a one-time code (the link `routerdesk serve` opens) for the token.
  // A wrong, expired or spent code is a 401 like a wrong token, and a code never issued counts as a wrong token in the
  // per-address throttle (a spent one sent again is no guess); a body beyond a few KiB is refused unread (413).
  app.post('/router/v1/console/session', { bodyLimit: 4096 }, async (request): Promise<ConsoleSession> => {
    const { code } = parseBody(consoleSessionRequestSchema, request.body);
    const outcome = deps.consoleCodes.redeem(code);
    // A good code is always taken; only a code never issued is a guess the throttle counts.
    const wait = outcome === 'ok' ? 0 : authThrottle.refuse(request.ip, outcome === 'unknown' ? code : '');
    if (wait > 0)
      throw new RouterError(
        429,
        'too_many_failed_tokens',
        `too many wrong tokens or codes from this address: try again in ${wait} s`,
        'rate_limit_error',
        null,
        { retry_after: String(wait) },
      );
    if (outcome === 'used')
      throw new RouterError(
        401,
        'console_code_used',
        "this one-time console code was already exchanged: get a new link with `routerdesk console-link` on the node's machine (or press Enter in the terminal of `routerdesk serve`)",
        'authentication_error',
      );
    if (outcome !== 'ok')
      throw new RouterError(
        401,
        'invalid_console_code',
        "unknown or expired one-time console code: get a new link with `routerdesk console-link` on the node's machine (or press Enter in the terminal of `routerdesk serve`)",
        'authentication_error',
      );
    request.log.info('console session opened with a one-time code');
    return { token: deps.consoleToken };
  });

  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken([deps.consoleToken, ...deps.operators], 'console'));

    scope.get(
      '/router/v1/console/models',
      async (): Promise<ConsoleModelList> => ({
        node: { nodeId: deps.nodeId, role: deps.role, version: deps.version, startedAt: deps.startedAt.toISOString() },
        models: deps.registry.all().map((r) => ({
          publicId: r.publicId,
          localId: r.localId,
          nodeId: deps.nodeId,
          backend: r.config.backend,
          capabilities: r.config.capabilities,
          lane: deps.supervisor.adapter(r.localId).lane,
          state: deps.supervisor.state(r.localId),
          configHash: r.configHash,
          modelHash: r.modelHash,
          contextsize: r.config.contextsize ?? r.config.vllm?.settings.max_model_length ?? null,
          idleUnloadMs: deps.supervisor.idleUnloadMs(r.localId),
          unloadsAt: isoOrNull(deps.supervisor.unloadsAt(r.localId)),
          lastError: deps.supervisor.lastError(r.localId),
          source: 'config_file' as const,
        })),
      }),
    );

    // A one-time code for a link a process that holds the token opens (`routerdesk demo`'s browser, `routerdesk
    // console-link`), living 60 s or as long as the body asks (at most 10 minutes).
    scope.post('/router/v1/console/codes', { bodyLimit: 4096 }, async (request): Promise<ConsoleCode> => {
      const ttl =
        (request.body === undefined || request.body === null
          ? undefined
          : parseBody(consoleCodeRequestSchema, request.body).expiresInMs) ?? CONSOLE_CODE_TTL_MS;
      return { code: deps.consoleCodes.issue(ttl), expiresInMs: ttl };
    });

    scope.get('/router/v1/console/cluster/nodes', async () => {
      const self = deps.snapshot();
      const local = {
        nodeId: deps.nodeId,
        url: null,
        role: deps.role,
        local: true,
        healthy: true,
        lastSeen: new Date().toISOString(),
        lastError: null,
        version: deps.version,
        settingsHash: self.settingsHash,
        models: self.models.length,
      };
      return { nodes: [local, ...(deps.membership?.views() ?? [])] };
    });

    // ID-1: every model with its source: config files and other nodes (the merge), static routes, recipes.
    scope.get('/router/v1/console/cluster/models', async () => ({
      models: sourcedCatalog({
        entries: deps.catalog.all(),
        available: (id) => deps.supervisor.available(id),
        staticRoutes: deps.staticRoutes,
        recipes: deps.assets.recipes.list(),
      }),
    }));

    scope.get('/router/v1/console/lanes', async () => ({ lanes: deps.supervisor.laneStatus() }));

    scope.get('/router/v1/console/cluster/lanes', async () => deps.clusterLanes());

    // Which binary each engine family runs on this node (PATH, then the engines cache), probed at most every few seconds.
    scope.get(
      '/router/v1/console/engines',
      async (): Promise<EnginesAnswer> => enginesAnswerSchema.parse({ engines: await describeEngines() }),
    );

    scope.get<{ Params: { localId: string }; Querystring: { lines?: string } }>(
      '/router/v1/console/models/:localId/logs',
      async (request) => {
        const rec = deps.registry.byLocalId(request.params.localId);
        if (!rec) throw new RouterError(404, 'model_not_found', `no local model '${request.params.localId}'`);
        const n = Math.min(Math.max(Number(request.query.lines ?? 100) || 100, 1), 500);
        return { localId: rec.localId, lines: deps.supervisor.logs(rec.localId, n) };
      },
    );
  });
}

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

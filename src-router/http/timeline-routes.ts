import type { FastifyInstance } from 'fastify';
import { gatherTimeline, type TimelineQuery } from '../cluster/timeline-gather';
import { RouterError, TIMELINE_MAX_LIMIT } from '../contract';
import { requireToken } from './auth';
import { count, queryTime } from './decision-routes';
import type { HttpDeps } from './deps';

type Query = Record<string, string | undefined>;

/** Without `from`: the last 15 minutes. */
const DEFAULT_SPAN_MS = 15 * 60_000;
const DEFAULT_LIMIT = 5_000;

function timelineQuery(q: Query, now: number): TimelineQuery {
  const to = queryTime(q.to, 'to') ?? now;
  const from = queryTime(q.from, 'from') ?? to - DEFAULT_SPAN_MS;
  if (from > to)
    throw new RouterError(
      400,
      'invalid_request',
      `from (${from}) is after to (${to})`,
      'invalid_request_error',
      'from',
    );
  return { from, to, limit: count(q.limit, 'limit', TIMELINE_MAX_LIMIT) ?? DEFAULT_LIMIT };
}

/**
 * The lease timeline's request and load analytics over HTTP: each node answers its own rows for a time range (node
 * API); the console gathers every node's (the Lending tab's timeline; the decisions come from the decision log).
 */
export async function timelineRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken(deps.clusterToken, 'cluster'));
    scope.get<{ Querystring: Query }>('/router/v1/node/timeline', async (request) =>
      deps.timeline(timelineQuery(request.query, Date.now())),
    );
  });

  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken([deps.consoleToken, ...deps.operators], 'console'));
    scope.get<{ Querystring: Query }>('/router/v1/console/timeline', async (request) =>
      gatherTimeline(
        {
          clusterToken: deps.clusterToken,
          own: deps.timeline,
          members: () => deps.membership?.statusCapable() ?? [],
          log: request.log,
        },
        timelineQuery(request.query, Date.now()),
      ),
    );
  });
}

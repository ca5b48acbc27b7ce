import type { FastifyInstance } from 'fastify';
import { RouterError } from '../contract';
import { REPLAY_MAX_EVENTS, REPLAY_MAX_RANGE_MS, type ReplayResultWire, replayRequestSchema } from '../contract/replay';
import { replayLinks, withSettingChanges } from '../lending/replay';
import { requireToken } from './auth';
import { clientGone } from './client-gone';
import { queryTime } from './decision-routes';
import type { HttpDeps } from './deps';
import { parseBody } from './errors';

type Query = Record<string, string | undefined>;

const bad = (param: string, message: string) =>
  new RouterError(400, 'invalid_request', `${param}: ${message}`, 'invalid_request_error', param);

/** A range a replay may cover: `to` not before `from`, at most REPLAY_MAX_RANGE_MS; else a 400 naming the field. */
function checkedRange(from: number, to: number): { from: number; to: number } {
  if (to < from) throw bad('to', `before from (${to} < ${from})`);
  if (to - from > REPLAY_MAX_RANGE_MS)
    throw bad('to', `the range is at most ${REPLAY_MAX_RANGE_MS / 3_600_000} h (${to - from} ms asked)`);
  return { from, to };
}

/**
 * What-if replay over HTTP: each node answers its own recorded rows for a range (node API, bounded by row
 * caps); the console replays the cluster's — this node's read directly, each healthy member's through the node API.
 * Both run in worker threads (`cluster/replay-runner.ts`): one at a time, time-bounded, stopped when the client leaves.
 */
export async function replayRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken(deps.clusterToken, 'cluster'));
    scope.get<{ Querystring: Query }>('/router/v1/node/replay-source', async (request, reply) => {
      const from = queryTime(request.query.from, 'from');
      const to = queryTime(request.query.to, 'to');
      if (from === undefined) throw bad('from', 'required (unix ms or ISO 8601)');
      if (to === undefined) throw bad('to', 'required (unix ms or ISO 8601)');
      // Up to the row caps of each kind, read and serialized in a worker thread; the node sends the worker's JSON as it is.
      const json = await deps.replay.sources.run<string>(
        { kind: 'source', storeDir: deps.replay.storeDir, range: checkedRange(from, to) },
        { signal: clientGone(reply).signal, log: request.log },
      );
      return reply.type('application/json; charset=utf-8').send(json);
    });
  });

  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken([deps.consoleToken, ...deps.operators], 'console'));
    scope.post('/router/v1/console/replay', async (request, reply) => {
      const body = parseBody(replayRequestSchema, request.body);
      const range = checkedRange(body.from, body.to);
      // A bad setting or link is its 400 here, before a worker starts (the worker checks them again).
      withSettingChanges(deps.replay.settings, body.settings);
      if (body.links) replayLinks(body.links);
      const members = deps.membership?.statusCapable() ?? [];
      return deps.replay.runner.run<ReplayResultWire>(
        {
          kind: 'replay',
          storeDir: deps.replay.storeDir,
          clusterToken: deps.clusterToken,
          members,
          settings: deps.replay.settings,
          input: {
            ...range,
            settings: body.settings,
            links: body.links,
            maxEvents: body.maxEvents ?? REPLAY_MAX_EVENTS,
          },
        },
        { signal: clientGone(reply).signal, log: request.log },
      );
    });
  });
}

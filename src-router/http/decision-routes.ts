import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { decisionPages, type GatherDeps, gatherDecisions } from '../cluster/decision-gather';
import { DECISION_EXPORT_MAX, DECISION_PAGE_MAX, RouterError, wholeNumberUpTo } from '../contract';
import {
  csvHeader,
  csvLines,
  type DecisionFilter,
  type DecisionPage,
  type DecisionQuery,
  exportFileName,
  toJsonLines,
} from '../store';
import { requireToken } from './auth';
import { clientGone } from './client-gone';
import type { HttpDeps } from './deps';

type Query = Record<string, string | undefined>;

/** A time from the query (unix ms or ISO 8601), or undefined when absent; anything else is a 400 naming the field. */
export function queryTime(v: string | undefined, name: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(n))
    throw new RouterError(
      400,
      'invalid_request',
      `${name}: not a time (unix ms or ISO 8601): ${v}`,
      'invalid_request_error',
      name,
    );
  return n;
}

/** Filters from a query string (LOG, UI-1, UI-6): from/to (unix ms or ISO), node, model, kind, event, outcome, reason. */
function filterOf(q: Query): DecisionFilter {
  const time = queryTime;
  const list = (v: string | undefined) =>
    v
      ? v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : undefined;
  return {
    from: time(q.from, 'from'),
    to: time(q.to, 'to'),
    node: list(q.node),
    model: q.model || undefined,
    kind: list(q.kind) as DecisionFilter['kind'],
    event: list(q.event),
    outcome: list(q.outcome) as DecisionFilter['outcome'],
    reason: list(q.reason),
  };
}

/** A whole number of rows from the query (1 to `most`, as the document's pattern says), or undefined when absent; anything else is a 400. */
export function count(v: string | undefined, name: string, most: number): number | undefined {
  if (v === undefined || v === '') return undefined;
  if (!wholeNumberUpTo(most).test(v))
    throw new RouterError(
      400,
      'invalid_request',
      `${name}: a whole number from 1 to ${most}, not ${JSON.stringify(v)}`,
      'invalid_request_error',
      name,
    );
  return Number(v);
}

/**
 * The decision log over HTTP: each node answers its own rows (node API); the console gathers the log of every node of
 * the cluster, newest first, with one combined cursor (UI-1), and exports it filtered as CSV or JSON Lines (UI-6).
 */
export async function decisionRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  const own = (q: DecisionQuery): DecisionPage => {
    deps.decisions.flush();
    return deps.decisions.query(q);
  };

  const gatherDeps = (request: FastifyRequest, signal?: AbortSignal): GatherDeps => ({
    nodeId: deps.nodeId,
    clusterToken: deps.clusterToken,
    own,
    members: () => deps.membership?.statusCapable() ?? [],
    log: request.log,
    signal,
  });

  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken(deps.clusterToken, 'cluster'));
    scope.get<{ Querystring: Query }>('/router/v1/node/decisions', async (request) => {
      const q = request.query;
      return own({ ...filterOf(q), cursor: q.cursor || undefined, limit: count(q.limit, 'limit', DECISION_PAGE_MAX) });
    });
  });

  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken([deps.consoleToken, ...deps.operators], 'console'));

    scope.get<{ Querystring: Query }>('/router/v1/console/decisions', async (request, reply) => {
      const q = request.query;
      // A client that leaves drops the members' pages still being read; there is nobody to answer then.
      const gone = clientGone(reply);
      try {
        return await gatherDecisions(gatherDeps(request, gone.signal), {
          ...filterOf(q),
          cursor: q.cursor || undefined,
          limit: count(q.limit, 'limit', DECISION_PAGE_MAX),
        });
      } catch (err) {
        if (gone.aborted) return reply;
        throw err;
      }
    });

    scope.get<{ Querystring: Query }>('/router/v1/console/decisions/export', async (request, reply) => {
      const format =
        request.query.format === 'jsonl'
          ? 'jsonl'
          : request.query.format === 'csv' || !request.query.format
            ? 'csv'
            : null;
      if (!format)
        throw new RouterError(400, 'invalid_request', 'format: csv or jsonl', 'invalid_request_error', 'format');
      const max = count(request.query.max, 'max', DECISION_EXPORT_MAX) ?? 100_000;
      // Streamed page by page (flat memory whatever the size): the header first, then each gathered page's lines.
      // A client that leaves stops it: no further page is read, and members' pages being read are dropped.
      const gone = clientGone(reply);
      gone.onAbort(() => request.log.info('decision export stopped: the client left'));
      const pages = decisionPages(gatherDeps(request, gone.signal), filterOf(request.query), max);
      async function* chunks() {
        if (format === 'csv') yield csvHeader();
        try {
          for await (const rows of pages) yield format === 'csv' ? csvLines(rows) : toJsonLines(rows);
        } catch (err) {
          if (!gone.aborted) throw err;
        }
      }
      return reply
        .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson')
        .header('content-disposition', `attachment; filename="${exportFileName(format, Date.now())}"`)
        .send(Readable.from(chunks()));
    });
  });
}

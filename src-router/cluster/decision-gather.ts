import type { FastifyBaseLogger } from 'fastify';
import { fetchAnswer, VIEW_LIMIT } from '../backends/answer-limits';
import { decisionPageSchema } from '../contract/decisions';
import { peerRead } from '../contract/peer-read';
import {
  type DecisionPage,
  type DecisionQuery,
  type DecisionRow,
  decodeMergedCursor,
  mergeNodePages,
  type NodeLogPage,
  nodeCursor,
} from '../store';

export interface GatherDeps {
  nodeId: string;
  clusterToken: string;
  /** This node's own log. */
  own(q: DecisionQuery): DecisionPage;
  /** The healthy members to ask (none on a slave or standalone node). */
  members(): { nodeId: string; url: string }[];
  log: FastifyBaseLogger;
  /** The client left: members' pages still being read are dropped and the gather rejects. */
  signal?: AbortSignal;
}

const queryString = (q: DecisionQuery) =>
  new URLSearchParams(
    Object.entries(q).flatMap(([k, v]): [string, string][] =>
      v === undefined || v === null ? [] : [[k, Array.isArray(v) ? v.join(',') : String(v)]],
    ),
  ).toString();

/**
 * One page of the whole cluster's decision log (UI-1): this node's rows and every member's, newest first, with one
 * combined cursor. A member that does not answer (or answers something that is not a page) is reported in `missing`
 * and counted as exhausted from then on, so paging and the export always finish.
 */
export async function gatherDecisions(d: GatherDeps, q: DecisionQuery): Promise<DecisionPage> {
  const state = decodeMergedCursor(q.cursor);
  const limit = q.limit;
  const missing: string[] = [];
  const sources: NodeLogPage[] = await Promise.all([
    (async () => {
      const c = nodeCursor(state, d.nodeId);
      return { key: d.nodeId, page: c.done ? null : d.own({ ...q, cursor: c.cursor, limit }) };
    })(),
    ...d.members().map(async (m): Promise<NodeLogPage> => {
      const c = nodeCursor(state, m.nodeId);
      if (c.done) return { key: m.nodeId, page: null };
      try {
        const res = await fetch(`${m.url}/router/v1/node/decisions?${queryString({ ...q, cursor: c.cursor, limit })}`, {
          headers: { authorization: `Bearer ${d.clusterToken}` },
          signal: d.signal ? AbortSignal.any([AbortSignal.timeout(5_000), d.signal]) : AbortSignal.timeout(5_000),
        });
        if (!res.ok) throw new Error(`${res.status}`);
        const page = peerRead(decisionPageSchema).safeParse(await fetchAnswer(res).json(VIEW_LIMIT));
        if (!page.success)
          throw new Error(
            `not a decision page: ${page.error.issues[0]?.path.join('.') || '(root)'}: ${page.error.issues[0]?.message}`,
          );
        return { key: m.nodeId, page: page.data as DecisionPage };
      } catch (err) {
        if (d.signal?.aborted) throw err;
        d.log.warn({ nodeId: m.nodeId }, `decision log of node not gathered: ${(err as Error).message}`);
        missing.push(m.nodeId);
        return { key: m.nodeId, page: { rows: [], nextCursor: null } };
      }
    }),
  ]);
  const page = mergeNodePages(sources, limit ?? 200, state);
  return missing.length ? { ...page, missing: missing.sort() } : page;
}

/**
 * The cluster's log matching `q`, newest first, page by page up to `max` rows (the export, UI-6): one page of at
 * most 1,000 rows is held at a time, so an export of a million rows streams in flat memory. It ends, without a
 * further page, once `d.signal` aborts.
 */
export async function* decisionPages(d: GatherDeps, q: DecisionQuery, max: number): AsyncGenerator<DecisionRow[]> {
  let cursor: string | null | undefined;
  let sent = 0;
  do {
    if (d.signal?.aborted) return;
    const page = await gatherDecisions(d, { ...q, cursor, limit: Math.min(1000, max - sent) });
    const rows = page.rows.slice(0, max - sent);
    sent += rows.length;
    if (rows.length) yield rows;
    cursor = page.nextCursor;
  } while (cursor && sent < max);
}

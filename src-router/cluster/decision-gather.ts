import type { FastifyBaseLogger } from 'fastify';
import { decodeMergedCursor, mergeNodePages, nodeCursor, type DecisionPage, type DecisionQuery, type DecisionRow, type NodeLogPage } from '../store';

export interface GatherDeps {
  nodeId: string;
  clusterToken: string;
  /** This node's own log. */
  own(q: DecisionQuery): DecisionPage;
  /** The healthy members to ask (none on a slave or standalone node). */
  members(): { nodeId: string; url: string }[];
  log: FastifyBaseLogger;
}

const queryString = (q: DecisionQuery) =>
  new URLSearchParams(Object.entries(q).flatMap(([k, v]): [string, string][] => (v === undefined || v === null ? [] : [[k, Array.isArray(v) ? v.join(',') : String(v)]]))).toString();

/**
 * One page of the whole cluster's decision log (UI-1): this node's rows and every member's, newest first, with one
 * combined cursor. A member that does not answer keeps its place in the cursor and is asked again on the next page.
 */
export async function gatherDecisions(d: GatherDeps, q: DecisionQuery): Promise<DecisionPage> {
  const state = decodeMergedCursor(q.cursor);
  const limit = q.limit;
  const sources: NodeLogPage[] = await Promise.all([
    (async () => {
      const c = nodeCursor(state, d.nodeId);
      return { key: d.nodeId, page: c.done ? null : d.own({ ...q, cursor: c.cursor, limit }) };
    })(),
    ...d.members().map(async (m): Promise<NodeLogPage> => {
      const c = nodeCursor(state, m.nodeId);
      if (c.done) return { key: m.nodeId, page: null };
      try {
        const res = await fetch(`${m.url}/router/v1/node/decisions?${queryString({ ...q, cursor: c.cursor, limit })}`, { headers: { authorization: `Bearer ${d.clusterToken}` }, signal: AbortSignal.timeout(5_000) });
        if (!res.ok) throw new Error(`${res.status}`);
        return { key: m.nodeId, page: (await res.json()) as DecisionPage };
      } catch (err) {
        d.log.warn({ nodeId: m.nodeId }, `decision log of node not gathered: ${(err as Error).message}`);
        return { key: m.nodeId, page: null };
      }
    }),
  ]);
  return mergeNodePages(sources, limit ?? 200, state);
}

/** Every row of the cluster's log matching `q`, newest first, up to `max` (the export, UI-6). */
export async function gatherAllDecisions(d: GatherDeps, q: DecisionQuery, max: number): Promise<DecisionRow[]> {
  const rows: DecisionRow[] = [];
  let cursor: string | null | undefined;
  do {
    const page = await gatherDecisions(d, { ...q, cursor, limit: 1000 });
    rows.push(...page.rows);
    cursor = page.nextCursor;
  } while (cursor && rows.length < max);
  return rows.slice(0, max);
}

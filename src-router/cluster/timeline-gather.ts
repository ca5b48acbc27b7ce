import type { FastifyBaseLogger } from 'fastify';
import { fetchAnswer, VIEW_LIMIT } from '../backends/answer-limits';
import { peerRead } from '../contract/peer-read';
import { type TimelineNodeWire, type TimelinePageWire, timelineNodeSchema } from '../contract/timeline';
import type { AnalyticsStore } from '../store';

export interface TimelineQuery {
  from: number;
  to: number;
  /** Rows of each table per node. */
  limit: number;
}

export interface TimelineGatherDeps {
  clusterToken: string;
  /** This node's own rows. */
  own(q: TimelineQuery): TimelineNodeWire;
  /** The healthy members to ask (none on a slave or standalone node). */
  members(): { nodeId: string; url: string }[];
  log: FastifyBaseLogger;
}

/** This node's rows for [from, to], in their wire form (the fields the timeline reads). */
export function ownTimelineRows(
  nodeId: string,
  analytics: Pick<AnalyticsStore, 'timelineRows'>,
  q: TimelineQuery,
): TimelineNodeWire {
  const rows = analytics.timelineRows(q.from, q.to, q.limit);
  return {
    nodeId,
    requests: rows.requests.map((r) => ({
      id: r.id,
      finishedAt: r.finishedAt,
      nodeId: r.nodeId,
      model: r.model,
      localId: r.localId,
      endpoint: r.endpoint,
      streamed: r.streamed,
      queueWaitMs: r.queueWaitMs,
      durationMs: r.durationMs,
      serviceMs: r.serviceMs ?? null,
      outcome: r.outcome,
      status: r.status ?? null,
      requestId: r.requestId ?? null,
      lentFrom: r.lentFrom ?? null,
    })),
    loads: rows.loads.map((l) => ({
      id: l.id,
      finishedAt: l.finishedAt,
      nodeId: l.nodeId,
      model: l.model,
      localId: l.localId,
      lane: l.lane,
      durationMs: l.durationMs,
      success: l.success,
      displacedLocalId: l.displacedLocalId ?? null,
      error: l.error ?? null,
    })),
    truncated: rows.truncated,
  };
}

/**
 * The lease timeline's analytics (request and load rows) of every node of the cluster for [from, to]: this node's and
 * each member's through the node API, parsed with the contract and bounded in time. A member that does not answer (or
 * answers something that is not its rows) is reported in `missing`; the others are still shown.
 */
export async function gatherTimeline(d: TimelineGatherDeps, q: TimelineQuery): Promise<TimelinePageWire> {
  const missing: string[] = [];
  const qs = new URLSearchParams({ from: String(q.from), to: String(q.to), limit: String(q.limit) });
  const remotes = await Promise.all(
    d.members().map(async (m): Promise<TimelineNodeWire | null> => {
      try {
        const res = await fetch(`${m.url}/router/v1/node/timeline?${qs}`, {
          headers: { authorization: `Bearer ${d.clusterToken}` },
          signal: AbortSignal.timeout(5_000),
        });
        if (!res.ok) throw new Error(`${res.status}`);
        const rows = peerRead(timelineNodeSchema).safeParse(await fetchAnswer(res).json(VIEW_LIMIT));
        if (!rows.success)
          throw new Error(
            `not timeline rows: ${rows.error.issues[0]?.path.join('.') || '(root)'}: ${rows.error.issues[0]?.message}`,
          );
        return rows.data;
      } catch (err) {
        d.log.warn({ nodeId: m.nodeId }, `timeline rows of node not gathered: ${(err as Error).message}`);
        missing.push(m.nodeId);
        return null;
      }
    }),
  );
  const nodes = [d.own(q), ...remotes.filter((r): r is TimelineNodeWire => r !== null)];
  return { from: q.from, to: q.to, nodes, ...(missing.length ? { missing: missing.sort() } : {}) };
}

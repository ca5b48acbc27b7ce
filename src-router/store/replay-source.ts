/**
 * What a replay reads from one node's store: request and load analytics, the decision log and the
 * links of a time range, plus the rows just before it (the fits start from them). Bounded by row caps.
 */

import { type LoadRow, type RequestRow, toLoadRow, toRequestRow } from './analytics';
import type { Db } from './db';
import { type DecisionRow, fromDbRow } from './decision-log-row';

export interface StoredLink {
  id: string;
  lane: 'image' | 'text';
  ownerNode: string;
  ownerModel: string;
  helperNode: string;
  helperModel: string;
  loadIfUnloaded: boolean;
  restoreAfterBorrow: boolean;
}

export interface ReplaySource {
  /** The node that wrote the store (from its decision log and its own engines' rows), null when it cannot tell. */
  nodeId: string | null;
  /** Requests that finished from `from` on and arrived by `to`. */
  requests: RequestRow[];
  /** Requests finished before `from` (newest `historyCap`), oldest first. */
  history: RequestRow[];
  /** Every load up to `to`, oldest first (the newest `cap`). */
  loads: LoadRow[];
  decisions: DecisionRow[];
  links: StoredLink[];
  /** A cap cut the range short. */
  truncated: boolean;
}

export interface ReplaySourceOptions {
  from: number;
  to: number;
  /** Most rows of each kind read from the range. */
  cap?: number;
  historyCap?: number;
}

export function readReplaySource(db: Db, o: ReplaySourceOptions): ReplaySource {
  const cap = o.cap ?? 200_000;
  const historyCap = o.historyCap ?? 5_000;
  const requests = (
    db
      .prepare(
        'SELECT * FROM request_analytics WHERE finished_at >= ? AND finished_at - duration_ms <= ? ORDER BY id LIMIT ?',
      )
      .all(o.from, o.to, cap + 1) as Record<string, unknown>[]
  ).map(toRequestRow);
  const history = (
    db
      .prepare('SELECT * FROM request_analytics WHERE finished_at < ? ORDER BY id DESC LIMIT ?')
      .all(o.from, historyCap) as Record<string, unknown>[]
  )
    .map(toRequestRow)
    .reverse();
  const loads = (
    db.prepare('SELECT * FROM load_analytics WHERE finished_at <= ? ORDER BY id DESC LIMIT ?').all(o.to, cap) as Record<
      string,
      unknown
    >[]
  )
    .map(toLoadRow)
    .reverse();
  const decisions = (
    db
      .prepare('SELECT * FROM offload_decisions WHERE at >= ? AND at <= ? ORDER BY at, id LIMIT ?')
      .all(o.from, o.to, cap + 1) as Record<string, unknown>[]
  ).map(fromDbRow);
  const links = (db.prepare('SELECT * FROM links ORDER BY id').all() as Record<string, unknown>[]).map((r) => ({
    id: r.id as string,
    lane: r.lane as 'image' | 'text',
    ownerNode: r.owner_node as string,
    ownerModel: r.owner_model as string,
    helperNode: r.helper_node as string,
    helperModel: r.helper_model as string,
    loadIfUnloaded: r.load_if_unloaded === 1,
    restoreAfterBorrow: r.restore_after_borrow === 1,
  }));
  const truncated = requests.length > cap || decisions.length > cap;
  return {
    nodeId: storeNodeId(db),
    requests: requests.slice(0, cap),
    history,
    loads,
    decisions: decisions.slice(0, cap),
    links,
    truncated,
  };
}

/** The writing node: the node its own decision rows name, else the node of the rows its own engines served. */
function storeNodeId(db: Db): string | null {
  const d = db
    .prepare('SELECT node_id AS n, COUNT(*) AS c FROM offload_decisions GROUP BY node_id ORDER BY c DESC LIMIT 1')
    .get() as { n: string } | undefined;
  if (d) return d.n;
  const r = db
    .prepare(
      'SELECT node_id AS n, COUNT(*) AS c FROM request_analytics WHERE service_source IS NOT NULL GROUP BY node_id ORDER BY c DESC LIMIT 1',
    )
    .get() as { n: string } | undefined;
  return r?.n ?? null;
}

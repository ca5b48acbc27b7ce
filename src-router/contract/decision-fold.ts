/**
 * Repeated decisions folded into one line of the Lending tab (UI-1). Pure and import-free: the router (exports)
 * and the console fold the same way.
 */

/** The fields a row needs to be folded. */
export interface FoldableDecision {
  at: number;
  nodeId: string;
  kind: string;
  event: string;
  ownerNode: string | null;
  ownerModel: string | null;
  helperNode: string | null;
  helperModel: string | null;
  outcome: string | null;
  reason: string | null;
  slots: number | null;
}

/** Consecutive repeats of one decision shown as one line. */
export interface Folded<R> {
  /** The newest row of the run: shows every variable of the decision. */
  row: R;
  count: number;
  /** Earliest and latest `at` in the run. */
  firstAt: number;
  lastAt: number;
}

/** Which stream of decisions a row belongs to: one writing node, kind, owner and helper. */
const streamKey = (r: FoldableDecision) =>
  JSON.stringify([r.nodeId, r.kind, r.ownerNode, r.ownerModel, r.helperNode, r.helperModel]);
const foldKey = (r: FoldableDecision) => JSON.stringify([r.event, r.outcome, r.reason, r.slots]);

/**
 * Rows repeat when they share node, kind, event, owner, helper, outcome, reason and slots and are consecutive within
 * their stream (same node, kind, owner and helper): a plan decision writes one row per pair, so the pairs of one tick
 * interleave and each pair still folds; a different row of the same pair ends the run. A line sits where its newest
 * row was; input order is kept (newest first from the log). `adjacentOnly`: fold only rows next to each other.
 */
export function foldDecisionRows<R extends FoldableDecision>(
  rows: readonly R[],
  opts: { adjacentOnly?: boolean } = {},
): Folded<R>[] {
  const out: Folded<R>[] = [];
  const open = new Map<string, { index: number; key: string }>();
  for (const r of rows) {
    const stream = streamKey(r);
    const key = foldKey(r);
    const o = open.get(stream);
    if (o && o.key === key && (!opts.adjacentOnly || o.index === out.length - 1)) {
      const f = out[o.index];
      f.count++;
      f.firstAt = Math.min(f.firstAt, r.at);
      f.lastAt = Math.max(f.lastAt, r.at);
      if (r.at > f.row.at) f.row = r;
      continue;
    }
    open.set(stream, { index: out.length, key });
    out.push({ row: r, count: 1, firstAt: r.at, lastAt: r.at });
  }
  return out;
}

import type { DecisionRowWire } from '../../../src-router/contract';

/**
 * Repeated decisions folded into one line of the Lending tab (UI-1), pure. The router folds the same way
 * (src-router/lending/decision-rows.ts foldRows, not importable here); test/unit/lending-console-parity.test.ts keeps
 * the two answering the same, line for line.
 */

/** Consecutive repeats of one decision shown as one line. */
export interface FoldedDecision {
  /** The newest row of the run: shows every variable of the decision. */
  row: DecisionRowWire;
  count: number;
  /** Earliest and latest `at` in the run. */
  firstAt: number;
  lastAt: number;
}

/** Which stream of decisions a row belongs to: one writing node, kind, owner and helper. */
function streamKey(r: DecisionRowWire): string {
  return JSON.stringify([r.nodeId, r.kind, r.ownerNode, r.ownerModel, r.helperNode, r.helperModel]);
}

function foldKey(r: DecisionRowWire): string {
  return JSON.stringify([r.event, r.outcome, r.reason, r.slots]);
}

/**
 * Rows repeat when they share node, kind, event, owner, helper, outcome, reason and slots and are consecutive within
 * their stream (same node, kind, owner and helper): the pairs of one plan tick interleave and each pair still folds;
 * a different row of the same pair ends the run. A line sits where its newest row was; input order is kept (newest
 * first from the log). `adjacentOnly`: fold only rows next to each other in the input.
 */
export function foldDecisions(rows: readonly DecisionRowWire[], opts: { adjacentOnly?: boolean } = {}): FoldedDecision[] {
  const out: FoldedDecision[] = [];
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

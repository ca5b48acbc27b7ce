import { describe, expect, it } from 'vitest';
import { foldDecisions } from '../../src-renderer/src/lending/decision-fold';
import type { DecisionRowWire } from '../../src-router/contract';

// Repeated decisions folded into one line with a count and time span (UI-1). Parity with the router's foldRows:
// lending-console-parity.test.ts.

let nextId = 1;
function row(over: Partial<DecisionRowWire> = {}): DecisionRowWire {
  return {
    id: nextId++,
    at: 1_000,
    nodeId: 'master',
    routerVersion: '0.1.0',
    kind: 'plan',
    event: 'granted',
    trigger: 'enqueued',
    linkId: 'l1',
    ownerNode: 'owner',
    ownerModel: 'a',
    helperNode: 'helper',
    helperModel: 'b',
    held: 2,
    backlog: 3,
    ownerDrainMs: 700,
    helperSwitchMs: 0,
    helperServiceMs: 100,
    serviceSource: 'helper',
    helperIdleMs: 900,
    outcome: 'granted',
    reason: null,
    slots: 2,
    requestsOut: null,
    ownerPredictedFinishMs: null,
    ownerJobMs: 240,
    helperJobMs: null,
    waitedMs: null,
    borrowedInBackend: null,
    requestId: null,
    details: null,
    ...over,
  };
}

describe('folding the decision log (UI-1)', () => {
  it('nothing to fold: no lines', () => {
    expect(foldDecisions([])).toEqual([]);
  });

  it('consecutive repeats of one decision are one line: count, span, the newest row shown', () => {
    const rows = [row({ at: 300, held: 1 }), row({ at: 200, held: 2 }), row({ at: 100, held: 3 })];
    const lines = foldDecisions(rows);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ count: 3, firstAt: 100, lastAt: 300 });
    expect(lines[0].row).toBe(rows[0]);
  });

  it('a different decision of the same pair ends the run; the same decision after it starts a new line', () => {
    const rows = [
      row({ at: 400 }),
      row({ at: 300, event: 'skipped', outcome: 'skipped', reason: 'cost_rejected', slots: 0 }),
      row({ at: 200 }),
      row({ at: 100 }),
    ];
    expect(foldDecisions(rows).map((l) => [l.row.event, l.count])).toEqual([
      ['granted', 1],
      ['skipped', 1],
      ['granted', 2],
    ]);
  });

  it('another reason or slot count is another decision', () => {
    const skipped = (reason: string, at: number) => row({ at, event: 'skipped', outcome: 'skipped', reason, slots: 0 });
    expect(
      foldDecisions([skipped('cost_rejected', 3), skipped('outranked', 2), skipped('outranked', 1)]).map(
        (l) => l.count,
      ),
    ).toEqual([1, 2]);
    expect(foldDecisions([row({ slots: 2 }), row({ slots: 1 })]).map((l) => l.count)).toEqual([1, 1]);
  });

  it('the pairs of one plan tick interleave and each pair still folds, where its newest row was', () => {
    const pairB = { helperNode: 'h2', helperModel: 'c' };
    const rows = [
      row({ at: 40 }),
      row({ at: 40, ...pairB }),
      row({ at: 30 }),
      row({ at: 30, ...pairB }),
      row({ at: 20 }),
    ];
    const lines = foldDecisions(rows);
    expect(lines.map((l) => [l.row.helperNode, l.count, l.firstAt, l.lastAt])).toEqual([
      ['helper', 3, 20, 40],
      ['h2', 2, 30, 40],
    ]);
  });

  it('rows of other kinds in between do not break a run (each kind is its own stream)', () => {
    const lent = (at: number) =>
      row({ at, kind: 'dispatch', event: 'lent', outcome: null, trigger: null, requestsOut: 1 });
    const lines = foldDecisions([row({ at: 5 }), lent(4), row({ at: 3 }), lent(2), row({ at: 1 })]);
    expect(lines.map((l) => [l.row.kind, l.count])).toEqual([
      ['plan', 3],
      ['dispatch', 2],
    ]);
  });

  it('the same decision written by another node is another line', () => {
    expect(foldDecisions([row({ nodeId: 'master' }), row({ nodeId: 'owner' })])).toHaveLength(2);
  });

  it('adjacentOnly folds only rows next to each other', () => {
    const other = { helperNode: 'h2' };
    const rows = [row({ at: 3 }), row({ at: 2, ...other }), row({ at: 1 })];
    expect(foldDecisions(rows, { adjacentOnly: true }).map((l) => l.count)).toEqual([1, 1, 1]);
    expect(foldDecisions(rows).map((l) => l.count)).toEqual([2, 1]);
  });

  it('the span does not depend on the input order; the line shows the newest row', () => {
    const rows = [row({ at: 100 }), row({ at: 300 }), row({ at: 200 })];
    const [line] = foldDecisions(rows);
    expect(line).toMatchObject({ count: 3, firstAt: 100, lastAt: 300 });
    expect(line.row).toBe(rows[1]);
  });
});

import { describe, expect, it } from 'vitest';
import {
  buildDecisionQuery,
  type Db,
  type DecisionDraft,
  DecisionLogWriter,
  type DecisionQuery,
  decodeCursor,
  encodeCursor,
  iterateDecisions,
  openStore,
  queryDecisions,
} from '../../src-router/store';
import { tempDir } from '../support/node-harness';

function store(nodeId: string, drafts: DecisionDraft[]): Db {
  const db = openStore(tempDir());
  const w = new DecisionLogWriter(db, { nodeId, retentionMs: 0, autoFlush: false });
  for (const d of drafts) w.add(d);
  w.close();
  return db;
}

const FIXTURE: DecisionDraft[] = [
  {
    at: 100,
    kind: 'plan',
    event: 'granted',
    outcome: 'granted',
    trigger: 'enqueued',
    ownerNode: 'a',
    ownerModel: 'llama',
    helperNode: 'b',
    helperModel: 'llama-b',
    slots: 2,
  },
  {
    at: 200,
    kind: 'plan',
    event: 'skipped',
    outcome: 'skipped',
    reason: 'cost_rejected',
    ownerNode: 'a',
    ownerModel: 'llama',
    helperNode: 'c',
    helperModel: 'qwen',
    slots: 0,
  },
  {
    at: 300,
    kind: 'plan',
    event: 'probe',
    outcome: 'probe',
    ownerNode: 'a',
    ownerModel: 'sd',
    helperNode: 'b',
    helperModel: 'sd-b',
    slots: 1,
  },
  {
    at: 400,
    kind: 'dispatch',
    event: 'relay_refused',
    reason: 'no_live_lease',
    ownerNode: 'a',
    ownerModel: 'llama',
    requestId: 'r1',
  },
  {
    at: 500,
    kind: 'helper',
    event: 'borrowed_returned',
    reason: 'busy_on_arrival',
    ownerNode: 'a',
    ownerModel: 'sd',
    helperNode: 'b',
    helperModel: 'sd-b',
  },
  {
    at: 600,
    kind: 'helper',
    event: 'native_waited_behind_borrowed',
    helperNode: 'b',
    helperModel: 'llama',
    waitedMs: 40,
    borrowedInBackend: 2,
  },
];

describe('decision log queries', () => {
  const db = store('n1', FIXTURE);
  const ats = (q: DecisionQuery) => queryDecisions(db, q).rows.map((r) => r.at);

  it('returns everything newest first without a filter', () => {
    expect(ats({})).toEqual([600, 500, 400, 300, 200, 100]);
  });

  it('filters by time range: from inclusive, to exclusive', () => {
    expect(ats({ from: 200, to: 500 })).toEqual([400, 300, 200]);
    expect(ats({ from: 600 })).toEqual([600]);
    expect(ats({ to: 100 })).toEqual([]);
  });

  it('filters by node (one or several)', () => {
    expect(ats({ node: 'n1' })).toHaveLength(6);
    expect(ats({ node: 'n2' })).toEqual([]);
    expect(ats({ node: ['n2', 'n1'] })).toHaveLength(6);
  });

  it('filters by model, owner or helper', () => {
    expect(ats({ model: 'llama' })).toEqual([600, 400, 200, 100]);
    expect(ats({ model: 'sd-b' })).toEqual([500, 300]);
    expect(ats({ model: 'qwen' })).toEqual([200]);
  });

  it('filters by kind, event, outcome and reason', () => {
    expect(ats({ kind: 'plan' })).toEqual([300, 200, 100]);
    expect(ats({ kind: ['dispatch', 'helper'] })).toEqual([600, 500, 400]);
    expect(ats({ event: 'relay_refused' })).toEqual([400]);
    expect(ats({ event: ['granted', 'probe'] })).toEqual([300, 100]);
    expect(ats({ outcome: 'skipped' })).toEqual([200]);
    expect(ats({ reason: 'busy_on_arrival' })).toEqual([500]);
    expect(ats({ reason: ['no_live_lease', 'cost_rejected'] })).toEqual([400, 200]);
    expect(ats({ kind: 'plan', model: 'llama', from: 150 })).toEqual([200]);
    expect(ats({ kind: [] })).toHaveLength(6);
  });

  it('maps every column back', () => {
    const [row] = queryDecisions(db, { event: 'native_waited_behind_borrowed' }).rows;
    expect(row).toMatchObject({
      id: 6,
      nodeId: 'n1',
      kind: 'helper',
      helperNode: 'b',
      helperModel: 'llama',
      waitedMs: 40,
      borrowedInBackend: 2,
      ownerNode: null,
      details: null,
    });
  });

  it('builds parameterised SQL and clamps the limit to 1..1000', () => {
    const q = buildDecisionQuery({ model: "x' OR 1=1 --", limit: 5000 });
    expect(q.sql).not.toContain('OR 1=1');
    expect(q.params).toEqual(["x' OR 1=1 --", "x' OR 1=1 --", 1001]);
    expect(q.limit).toBe(1000);
    expect(buildDecisionQuery({ limit: 0 }).limit).toBe(1);
    expect(buildDecisionQuery({}).limit).toBe(200);
  });

  it('rejects a cursor it did not make', () => {
    expect(decodeCursor(encodeCursor({ at: 123, id: 7 }))).toEqual({ at: 123, id: 7 });
    expect(() => queryDecisions(db, { cursor: 'garbage' })).toThrow(
      expect.objectContaining({ code: 'invalid_cursor', status: 400 }),
    );
    expect(() => queryDecisions(db, { cursor: Buffer.from('d1:1:x').toString('base64url') })).toThrow(/cursor/);
  });

  it('pages through 2,500 rows (ties on time included) without duplicates or gaps', () => {
    const big = store(
      'n',
      Array.from(
        { length: 2500 },
        (_, i): DecisionDraft => ({
          at: 1_000 + Math.floor(i / 7),
          kind: 'dispatch',
          event: i % 2 ? 'lent' : 'returned',
          requestId: `r${i}`,
        }),
      ),
    );
    for (const limit of [1000, 333, 7]) {
      const seen: number[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = queryDecisions(big, { cursor, limit });
        expect(page.rows.length).toBeLessThanOrEqual(limit);
        seen.push(...page.rows.map((r) => r.id));
        cursor = page.nextCursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(Math.ceil(2500 / limit));
      expect(seen).toEqual(Array.from({ length: 2500 }, (_, i) => 2500 - i));
    }
    const lent: number[] = [];
    let cursor: string | null = null;
    do {
      const page = queryDecisions(big, { cursor, limit: 400, event: 'lent', from: 1100 });
      lent.push(...page.rows.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor);
    const expected = Array.from({ length: 2500 }, (_, i) => i)
      .filter((i) => i % 2 === 1 && 1_000 + Math.floor(i / 7) >= 1100)
      .map((i) => i + 1)
      .reverse();
    expect(lent).toEqual(expected);
    expect([...iterateDecisions(big, { event: 'lent', from: 1100 })].map((r) => r.id)).toEqual(expected);
    expect([...iterateDecisions(big, {}, 3)].map((r) => r.id)).toEqual([2500, 2499, 2498]);
  });

  it('uses the indexes for time and owner model', () => {
    const plan = (sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join(' | ');
    expect(plan('SELECT * FROM offload_decisions WHERE at >= 5 ORDER BY at DESC, id DESC')).toContain(
      'offload_decisions_time',
    );
    expect(plan("SELECT * FROM offload_decisions WHERE owner_model = 'x' AND at >= 5")).toContain(
      'offload_decisions_owner_time',
    );
  });
});

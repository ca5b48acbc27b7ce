import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type Db,
  type DecisionDraft,
  type DecisionKind,
  DecisionLogWriter,
  openStore,
  queryDecisions,
} from '../../src-router/store';
import { ROUTER_VERSION } from '../../src-router/version';
import { tempDir } from '../support/node-harness';

const DAY = 86_400_000;
const HOUR = 3_600_000;

function draft(at: number, extra: Partial<DecisionDraft> = {}): DecisionDraft {
  return {
    at,
    kind: 'dispatch',
    event: 'lent',
    ownerNode: 'a',
    ownerModel: 'm',
    helperNode: 'b',
    helperModel: 'm2',
    slots: 1,
    requestsOut: 1,
    ...extra,
  };
}

const count = (db: Db) => (db.prepare('SELECT COUNT(*) AS n FROM offload_decisions').get() as { n: number }).n;

/** Counts the transactions run by functions made with db.transaction after this call. */
function countTransactions(db: Db): { runs: number } {
  const box = { runs: 0 };
  const real = db.transaction.bind(db);
  db.transaction = ((fn: (...args: unknown[]) => unknown) =>
    real((...args: unknown[]) => {
      box.runs++;
      return fn(...args);
    })) as Db['transaction'];
  return box;
}

describe('decision log writer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes nothing until flush, then every queued row in one transaction, stamped with node and version', () => {
    const dir = tempDir();
    const db = openStore(dir);
    const tx = countTransactions(db);
    const w = new DecisionLogWriter(db, { nodeId: 'node-a', retentionMs: DAY, autoFlush: false, now: () => 10_000 });
    for (let i = 0; i < 700; i++) w.add(draft(1000 + i));
    const reader = new Database(join(dir, 'router.db'), { readonly: true });
    expect(count(reader)).toBe(0);
    expect(w.pending).toBe(700);
    expect(w.flush()).toBe(700);
    expect(tx.runs).toBe(1);
    expect(count(reader)).toBe(700);
    expect(w.stats()).toMatchObject({ pending: 0, written: 700, flushes: 1, dropped: 0, failed: 0 });
    const rows = queryDecisions(db, { limit: 1000 }).rows;
    expect(new Set(rows.map((r) => r.routerVersion))).toEqual(new Set([ROUTER_VERSION]));
    expect(new Set(rows.map((r) => r.nodeId))).toEqual(new Set(['node-a']));
    expect(w.flush()).toBe(0);
    expect(tx.runs).toBe(1);
    reader.close();
  });

  it('stamps the router version it is given, fills missing columns with null and parses details text', () => {
    const db = openStore(tempDir());
    const w = new DecisionLogWriter(db, {
      nodeId: 'n',
      routerVersion: '9.9.9',
      retentionMs: DAY,
      autoFlush: false,
      now: () => 5000,
    });
    w.add({
      at: 1000,
      kind: 'helper',
      event: 'borrowed_returned',
      helperNode: 'n',
      helperModel: 'x',
      reason: 'own_work_arrived',
      details: JSON.stringify({ count: 2 }),
    });
    w.add({ at: 1001, kind: 'helper', event: 'native_waited_behind_borrowed', waitedMs: 12.6, details: 'not json' });
    const untyped: Record<string, unknown> = {
      at: 1002,
      kind: 'dispatch',
      event: 'lent',
      id: 99,
      nodeId: 'spoofed',
      extra: { a: 1 },
    };
    w.add(untyped as unknown as DecisionDraft);
    w.flush();
    const [third, second, first] = queryDecisions(db).rows;
    expect(third).toMatchObject({ id: 3, nodeId: 'n', details: { extra: { a: 1 } } });
    expect(first).toMatchObject({
      routerVersion: '9.9.9',
      nodeId: 'n',
      reason: 'own_work_arrived',
      details: { count: 2 },
      trigger: null,
      slots: null,
      ownerNode: null,
    });
    expect(second).toMatchObject({ waitedMs: 13, details: { text: 'not json' } });
  });

  it('flushes 250 ms after the first row, or at 500 rows, from unref timers', () => {
    vi.useFakeTimers();
    const db = openStore(tempDir());
    const w = new DecisionLogWriter(db, { nodeId: 'n', retentionMs: DAY, now: () => 0 });
    w.add(draft(1));
    vi.advanceTimersByTime(249);
    expect(count(db)).toBe(0);
    vi.advanceTimersByTime(1);
    expect(count(db)).toBe(1);
    for (let i = 0; i < 500; i++) w.add(draft(10 + i));
    expect(count(db)).toBe(1); // never on the caller's stack
    vi.advanceTimersByTime(0);
    expect(count(db)).toBe(501);
    w.close();
  });

  it('past the cap drops the oldest unwritten rows and counts them, never blocking the caller', () => {
    const db = openStore(tempDir());
    const w = new DecisionLogWriter(db, {
      nodeId: 'n',
      retentionMs: DAY,
      autoFlush: false,
      maxQueued: 10,
      now: () => 0,
    });
    for (let i = 0; i < 3000; i++) w.add(draft(i));
    expect(w.stats()).toMatchObject({ pending: 10, dropped: 2990 });
    expect(w.flush()).toBe(10);
    expect(queryDecisions(db).rows.map((r) => r.at)).toEqual([
      2999, 2998, 2997, 2996, 2995, 2994, 2993, 2992, 2991, 2990,
    ]);
  });

  it('counts a row SQLite refuses and still writes the rest of the batch', () => {
    const db = openStore(tempDir());
    const errors: Error[] = [];
    const w = new DecisionLogWriter(db, {
      nodeId: 'n',
      retentionMs: DAY,
      autoFlush: false,
      now: () => 0,
      onError: (e) => errors.push(e),
    });
    w.add(draft(1));
    w.add({ ...draft(2), kind: null as unknown as DecisionKind });
    w.add(draft(3));
    expect(w.flush()).toBe(2);
    expect(w.stats()).toMatchObject({ written: 2, failed: 1, flushes: 1 });
    expect(errors).toHaveLength(1);
  });

  it('prunes rows older than the retention, at most once per hour', () => {
    const db = openStore(tempDir());
    let now = 30 * DAY;
    const w = new DecisionLogWriter(db, { nodeId: 'n', retentionMs: 14 * DAY, autoFlush: false, now: () => now });
    w.add(draft(now - 20 * DAY));
    w.add(draft(now - 14 * DAY - 1));
    w.add(draft(now - 14 * DAY));
    w.add(draft(now - 1000));
    w.flush();
    expect(queryDecisions(db).rows.map((r) => r.at)).toEqual([now - 1000, now - 14 * DAY]);
    expect(w.stats()).toMatchObject({ pruned: 2, lastPruneAt: now });
    const pruneAt = now;
    w.add(draft(1));
    now += HOUR - 1;
    w.flush();
    expect(count(db)).toBe(3); // not due yet
    now = pruneAt + HOUR;
    w.flush();
    expect(queryDecisions(db).rows.map((r) => r.at)).toEqual([pruneAt - 1000]);
    expect(w.prune(14 * DAY, 100 * DAY)).toBe(1);
    expect(count(db)).toBe(0);
  });

  it('close writes what is queued; later rows are dropped and counted', () => {
    const db = openStore(tempDir());
    const w = new DecisionLogWriter(db, { nodeId: 'n', retentionMs: 0, autoFlush: false });
    w.add(draft(1));
    w.close();
    w.add(draft(2));
    expect(count(db)).toBe(1);
    expect(w.stats()).toMatchObject({ written: 1, dropped: 1, pending: 0 });
  });
});

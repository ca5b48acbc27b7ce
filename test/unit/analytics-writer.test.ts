import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fitFromAnalytics } from '../../src-router/costs';
import {
  AnalyticsStore,
  type Db,
  type LoadRow,
  openStore,
  type RequestRow,
  toRequestRow,
} from '../../src-router/store';
import { tempDir } from '../support/node-harness';

// Issue #9: request and load analytics are batched off the request path like the decision log, pruned with the
// same retention, and written on close; every read sees the rows recorded so far (cost fits read right after a
// request finishes).

const DAY = 86_400_000;
const HOUR = 3_600_000;

function request(finishedAt: number, extra: Partial<RequestRow> = {}): RequestRow {
  return {
    finishedAt,
    nodeId: 'n',
    model: 'm',
    localId: 'm',
    backend: 'sim',
    endpoint: 'chat',
    streamed: false,
    promptBytes: 100,
    promptTokens: 25,
    tokensGenerated: 10,
    queueWaitMs: 0,
    durationMs: 50,
    serviceMs: 40,
    serviceSource: 'engine',
    outcome: 'ok',
    status: 200,
    ...extra,
  };
}
function load(finishedAt: number, extra: Partial<LoadRow> = {}): LoadRow {
  return {
    finishedAt,
    nodeId: 'n',
    model: 'm',
    localId: 'm',
    backend: 'sim',
    lane: 'text',
    durationMs: 300,
    success: true,
    ...extra,
  };
}

const count = (db: Db, table: 'request_analytics' | 'load_analytics') =>
  (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

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

describe('batched analytics writer (issue #9)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('records nothing on the caller’s stack; a read right after a request sees it exactly (the first flushes)', () => {
    const dir = tempDir();
    const db = openStore(dir);
    const a = new AnalyticsStore(db, 'n', { autoFlush: false, retentionMs: DAY, now: () => 10_000 });
    const reader = new Database(join(dir, 'router.db'), { readonly: true });
    for (let i = 0; i < 12; i++) a.recordRequest(request(1000 + i, { serviceMs: 40 + i, tokensGenerated: 10 + i }));
    a.recordLoad(load(900));
    expect(count(reader, 'request_analytics')).toBe(0); // still queued
    expect(a.pending).toBe(13);
    // The reads the lending node does right after a request (costs(): requestsForLocal + loadsFor; token profiles).
    const rows = a.requestsForLocal('m', 0);
    expect(rows).toHaveLength(12);
    expect(rows.map((r) => r.serviceMs)).toEqual(Array.from({ length: 12 }, (_, i) => 40 + i));
    expect(a.loadsFor('m')).toEqual([expect.objectContaining({ durationMs: 300, success: true, lane: 'text' })]);
    expect(count(reader, 'request_analytics')).toBe(12);
    // The fit from the read rows equals the fit from every recorded row: nothing is left in the buffer.
    const recorded = Array.from({ length: 12 }, (_, i) =>
      request(1000 + i, { serviceMs: 40 + i, tokensGenerated: 10 + i }),
    );
    const opts = { now: 10_000, windowMs: DAY, minSamples: 3, lane: 'text' as const };
    const fit = fitFromAnalytics(rows, opts);
    expect(fit).not.toBeNull();
    expect(fit).toEqual(fitFromAnalytics(recorded, opts));
    // Every read sees what was recorded just before it.
    a.recordRequest(request(2000, { model: 'other', localId: 'other' }));
    expect(a.requestsFor('other')).toHaveLength(1);
    a.recordRequest(request(2001, { outcome: 'error', status: 502, error: 'boom' }));
    expect(a.recentRequests(1)[0]).toMatchObject({ finishedAt: 2001, outcome: 'error', error: 'boom' });
    a.recordLoad(load(2002, { success: false, error: 'no memory' }));
    expect(a.recentLoads(1)[0]).toMatchObject({ finishedAt: 2002, success: false, error: 'no memory' });
    reader.close();
    a.close();
  });

  it('writes requests and loads of one flush in one transaction, keeping their column forms', () => {
    const db = openStore(tempDir());
    const tx = countTransactions(db);
    const a = new AnalyticsStore(db, 'n', { autoFlush: false, now: () => 0 });
    for (let i = 0; i < 700; i++)
      a.recordRequest(request(i, { queueWaitMs: 3.4, durationMs: 80.6, streamed: i % 2 === 0 }));
    for (let i = 0; i < 5; i++) a.recordLoad(load(i, { displacedLocalId: i ? null : 'other' }));
    expect(a.flush()).toBe(705);
    expect(tx.runs).toBe(1);
    expect(a.stats()).toMatchObject({ pending: 0, written: 705, flushes: 1, failed: 0, dropped: 0 });
    expect(count(db, 'request_analytics')).toBe(700);
    expect(count(db, 'load_analytics')).toBe(5);
    expect(a.requestsFor('m')[0]).toMatchObject({
      queueWaitMs: 3,
      durationMs: 81,
      streamed: true,
      serviceSource: 'engine',
    });
    expect(a.loadsFor('m')[0]).toMatchObject({ displacedLocalId: 'other' });
    expect(a.flush()).toBe(0);
    expect(tx.runs).toBe(1);
  });

  it('flushes 250 ms after the first row, or at 500 rows, from unref timers — never on the caller’s stack', () => {
    vi.useFakeTimers();
    const db = openStore(tempDir());
    const a = new AnalyticsStore(db, 'n', { retentionMs: DAY, now: () => 0 });
    a.recordRequest(request(1));
    vi.advanceTimersByTime(249);
    expect(count(db, 'request_analytics')).toBe(0);
    vi.advanceTimersByTime(1);
    expect(count(db, 'request_analytics')).toBe(1);
    for (let i = 0; i < 499; i++) a.recordRequest(request(10 + i));
    a.recordLoad(load(5));
    expect(count(db, 'request_analytics')).toBe(1);
    vi.advanceTimersByTime(0);
    expect(count(db, 'request_analytics')).toBe(500);
    expect(count(db, 'load_analytics')).toBe(1);
    a.close();
  });

  it('prunes requests and loads older than the retention with the injected clock, at most once per hour', () => {
    const db = openStore(tempDir());
    let now = 30 * DAY;
    const a = new AnalyticsStore(db, 'n', { retentionMs: 14 * DAY, autoFlush: false, now: () => now });
    a.recordRequest(request(now - 20 * DAY));
    a.recordRequest(request(now - 14 * DAY - 1));
    a.recordRequest(request(now - 14 * DAY));
    a.recordRequest(request(now - 1000));
    a.recordLoad(load(now - 15 * DAY));
    a.recordLoad(load(now - 1000));
    a.flush();
    expect(a.requestsFor('m').map((r) => r.finishedAt)).toEqual([now - 14 * DAY, now - 1000]);
    expect(a.loadsFor('m').map((r) => r.finishedAt)).toEqual([now - 1000]);
    expect(a.stats()).toMatchObject({ pruned: 3, lastPruneAt: now });
    const prunedAt = now;
    a.recordRequest(request(1)); // ancient, but the next prune is not due yet
    now += HOUR - 1;
    a.flush();
    expect(count(db, 'request_analytics')).toBe(3);
    now = prunedAt + HOUR;
    a.flush();
    expect(a.requestsFor('m').map((r) => r.finishedAt)).toEqual([prunedAt - 1000]);
    expect(a.prune(14 * DAY, 100 * DAY)).toBe(2);
    expect(count(db, 'request_analytics') + count(db, 'load_analytics')).toBe(0);
  });

  it('keeps everything without a retention (tools and tests that construct it bare)', () => {
    const db = openStore(tempDir());
    const a = new AnalyticsStore(db);
    a.recordRequest(request(1));
    expect(a.prune()).toBe(0);
    expect(a.requestsFor('m')).toHaveLength(1);
    a.close();
  });

  it('close writes what is queued (nothing lost at shutdown); rows recorded later are dropped and counted', () => {
    const dir = tempDir();
    const db = openStore(dir);
    const a = new AnalyticsStore(db, 'n', { retentionMs: DAY, now: () => 0 }); // timers on: close must not wait for them
    for (let i = 0; i < 3; i++) a.recordRequest(request(i));
    a.recordLoad(load(1));
    a.close();
    db.close();
    const reopened = openStore(dir);
    expect(count(reopened, 'request_analytics')).toBe(3);
    expect(count(reopened, 'load_analytics')).toBe(1);
    a.recordRequest(request(9));
    expect(a.stats()).toMatchObject({ written: 4, dropped: 1, pending: 0 });
    reopened.close();
  });

  it('a row SQLite refuses is counted and reported; the rest of the batch is written', () => {
    const db = openStore(tempDir());
    const errors: Error[] = [];
    const a = new AnalyticsStore(db, 'n', { autoFlush: false, onError: (e) => errors.push(e) });
    a.recordRequest(request(1));
    a.recordRequest({ ...request(2), model: null as unknown as string });
    a.recordRequest(request(3));
    expect(a.flush()).toBe(2);
    expect(a.stats()).toMatchObject({ written: 2, failed: 1 });
    expect(errors).toHaveLength(1);
  });

  it("a model's newest rows, kept in memory once read, are exactly what the store holds (issue #14)", () => {
    const dir = tempDir();
    const db = openStore(dir);
    const a = new AnalyticsStore(db, 'n', { autoFlush: false });
    const reader = new Database(join(dir, 'router.db'), { readonly: true });
    /** The query the rows were read with before they were kept in memory. */
    const stored = (since: number, limit: number) => {
      a.flush();
      const rows = reader
        .prepare(
          "SELECT * FROM request_analytics WHERE local_id = 'm' AND node_id = 'n' AND finished_at >= ? ORDER BY id DESC LIMIT ?",
        )
        .all(since, limit) as Record<string, unknown>[];
      return rows.reverse().map(toRequestRow);
    };
    const odd = (i: number): Partial<RequestRow> => ({
      queueWaitMs: i + 0.4,
      durationMs: i + 0.6,
      serviceMs: i % 3 ? i + 0.5 : null,
      promptTokens: i % 2 ? i : undefined,
      streamed: i % 2 === 0,
      requestId: `r${i}`,
    });
    for (let i = 0; i < 30; i++) a.recordRequest(request(1000 + i, odd(i)));
    expect(a.requestsForLocal('m', 0)).toEqual(stored(0, 2000)); // seeded from the store
    for (let i = 30; i < 2300; i++) {
      a.recordRequest(request(1000 + i, odd(i)));
      if (i % 7 === 0) a.recordRequest(request(1000 + i, { ...odd(i), nodeId: 'helper' })); // a lent one, served elsewhere
      if (i % 11 === 0) a.recordRequest(request(1000 + i, { ...odd(i), localId: 'other' }));
    }
    for (const [since, limit] of [
      [0, 2000],
      [3000, 2000],
      [3290, 5],
      [9999, 2000],
    ] as const)
      expect(a.requestsForLocal('m', since, limit)).toEqual(stored(since, limit));
    expect(a.requestsForLocal('m', 0)).toHaveLength(2000);
    // Pruning deletes the same rows from the store and from memory.
    a.prune(1000, 3200);
    expect(a.requestsForLocal('m', 0)).toEqual(stored(0, 2000));
    expect(a.requestsForLocal('m', 0)[0].finishedAt).toBe(2200);
    reader.close();
    a.close();
  });

  it('writes a large flush in multi-row statements, every row in order; one refused row costs only itself (issue #14)', () => {
    const db = openStore(tempDir());
    const a = new AnalyticsStore(db, 'n', { autoFlush: false, onError: () => {} });
    for (let i = 0; i < 100; i++)
      a.recordRequest(
        i === 40 ? { ...request(i), model: null as unknown as string } : request(i, { requestId: `r${i}` }),
      );
    a.recordLoad(load(5));
    expect(a.flush()).toBe(100);
    expect(a.stats()).toMatchObject({ written: 100, failed: 1 });
    const ids = (
      db.prepare('SELECT request_id FROM request_analytics ORDER BY id').all() as { request_id: string }[]
    ).map((r) => r.request_id);
    expect(ids).toEqual(Array.from({ length: 100 }, (_, i) => `r${i}`).filter((r) => r !== 'r40'));
    expect(count(db, 'load_analytics')).toBe(1);
    db.close();
  });
});

describe('request analytics columns (PRICE-2, issue #15)', () => {
  it('every field of a request row lands in its own column (rows are bound by position)', () => {
    const db = openStore(tempDir());
    const a = new AnalyticsStore(db, 'n', { autoFlush: false });
    a.recordRequest({
      finishedAt: 1_000,
      nodeId: 'node-1',
      model: 'pub',
      localId: 'loc',
      backend: 'sim',
      endpoint: 'image',
      streamed: true,
      promptBytes: 11,
      promptTokens: 12,
      tokensGenerated: 13,
      imagePixels: 14,
      imageSteps: 15,
      imageCount: 16,
      audioSeconds: 17.5,
      queueWaitMs: 18.4,
      durationMs: 19.6,
      serviceMs: 20.2,
      serviceSource: 'derived',
      derivedServiceMs: 21.7,
      outcome: 'error',
      status: 502,
      error: 'boom',
      guardianFor: 'o/text',
      guardianReason: 'detected',
      requestId: 'req-1',
      lentFrom: 'owner/a',
    });
    a.recordRequest(request(2_000));
    expect(a.flush()).toBe(2);
    const rows = db.prepare('SELECT * FROM request_analytics ORDER BY finished_at').all() as Record<string, unknown>[];
    expect(rows[0]).toMatchObject({
      finished_at: 1_000,
      node_id: 'node-1',
      model: 'pub',
      local_id: 'loc',
      backend: 'sim',
      endpoint: 'image',
      streamed: 1,
      prompt_bytes: 11,
      prompt_tokens: 12,
      tokens_generated: 13,
      image_pixels: 14,
      image_steps: 15,
      image_count: 16,
      audio_seconds: 17.5,
      queue_wait_ms: 18,
      duration_ms: 20,
      service_ms: 20,
      service_source: 'derived',
      derived_service_ms: 22,
      outcome: 'error',
      status: 502,
      error: 'boom',
      guardian_for: 'o/text',
      guardian_reason: 'detected',
      request_id: 'req-1',
      lent_from: 'owner/a',
    });
    // Absent optional fields are NULL, not missing or zero.
    expect(rows[1]).toMatchObject({
      streamed: 0,
      image_pixels: null,
      audio_seconds: null,
      derived_service_ms: null,
      error: null,
      guardian_for: null,
      request_id: null,
      lent_from: null,
    });
    db.close();
  });
});

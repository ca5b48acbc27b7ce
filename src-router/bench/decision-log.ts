/**
 * decision-log: the decision log's write path and its gathered read path, on real SQLite files (openStore: WAL,
 * synchronous NORMAL, migrations) in temp folders.
 *   writes: DecisionLogWriter batching (flush every 500 rows, as its default batch size; and with its own timers, as
 *           in a node) against a naive baseline: one autocommitted INSERT per row, same statement and parameters.
 *   reads:  one page of 200 gathered from 3 nodes' logs (query each + mergeNodePages, following the combined cursor
 *           page after page) against one node's page of 200 on its own.
 */
import {
  completeDecision,
  type Db,
  DECISION_COLUMNS,
  DECISION_FIELDS,
  type DecisionDraft,
  DecisionLogWriter,
  type DecisionPage,
  decodeMergedCursor,
  mergeNodePages,
  type NodeLogPage,
  nodeCursor,
  openStore,
  queryDecisions,
  toDbParams,
} from '../store';
import { BenchScope } from './scope';
import { type Cell, formatNumber, formatRatio, percentile, ratio } from './table';
import type { Benchmark, BenchOptions, BenchResult } from './types';

const START = 1_700_000_000_000;
const PLAN_REASONS = ['cost_rejected', 'helper_not_accepting', 'helper_claimed', 'outranked', null] as const;

/** A realistic row: plan rows with every variable, dispatch rows, now and then a helper row. */
export function benchDraft(i: number, node = 'owner'): DecisionDraft {
  const at = START + i * 7;
  if (i % 5 === 4)
    return {
      at,
      kind: 'dispatch',
      event: 'lent',
      ownerNode: node,
      ownerModel: 'model-a',
      helperNode: 'helper',
      helperModel: 'model-b',
      linkId: 'L1',
      slots: 2,
      requestsOut: 1 + (i % 2),
      requestId: `req-${i}`,
    };
  if (i % 50 === 49)
    return {
      at,
      kind: 'helper',
      event: 'native_waited_behind_borrowed',
      helperNode: 'helper',
      helperModel: 'model-b',
      waitedMs: 40 + (i % 30),
      borrowedInBackend: 1,
    };
  const reason = PLAN_REASONS[Math.floor(i / 5) % PLAN_REASONS.length];
  return {
    at,
    kind: 'plan',
    event: reason ? 'skipped' : 'granted',
    outcome: reason ? 'skipped' : 'granted',
    reason,
    trigger: 'enqueued',
    linkId: 'L1',
    ownerNode: node,
    ownerModel: 'model-a',
    helperNode: 'helper',
    helperModel: 'model-b',
    held: 1 + (i % 9),
    backlog: 3 + (i % 9),
    ownerDrainMs: 900 + (i % 400),
    helperSwitchMs: 0,
    helperServiceMs: 60 + (i % 20),
    serviceSource: 'helper',
    helperIdleMs: i % 5000,
    ownerJobMs: 100 + (i % 10),
    slots: reason ? 0 : 2,
    details: i % 3 === 0 ? { note: 'bench', pair: i % 17 } : null,
  };
}

const count = (db: Db) => (db.prepare('SELECT COUNT(*) AS n FROM offload_decisions').get() as { n: number }).n;

interface WriteResult {
  label: string;
  rows: number;
  ms: number;
  transactions: number;
}

function writeBatched(scope: BenchScope, rows: number, batch: number): WriteResult {
  const db = openStore(scope.tempDir());
  try {
    const w = new DecisionLogWriter(db, { nodeId: 'owner', retentionMs: 0, autoFlush: false });
    const t0 = performance.now();
    for (let i = 0; i < rows; i++) {
      w.add(benchDraft(i));
      if (w.pending >= batch) w.flush();
    }
    w.close();
    const ms = performance.now() - t0;
    if (count(db) !== rows || w.stats().written !== rows) throw new Error(`writer wrote ${count(db)} of ${rows} rows`);
    return { label: `DecisionLogWriter, flush every ${batch}`, rows, ms, transactions: w.stats().flushes };
  } finally {
    db.close();
  }
}

/** The writer as a node runs it: add() only, its own timers flush (setImmediate at 500 queued). */
async function writeAuto(scope: BenchScope, rows: number): Promise<WriteResult> {
  const db = openStore(scope.tempDir());
  try {
    const w = new DecisionLogWriter(db, { nodeId: 'owner', retentionMs: 0 });
    const t0 = performance.now();
    // Rows arrive in bursts of 100 with the event loop turning between them, as decisions do.
    for (let i = 0; i < rows; i++) {
      w.add(benchDraft(i));
      if (i % 100 === 99) await new Promise((r) => setImmediate(r));
    }
    for (let spins = 0; w.pending > 0 && spins < 10_000; spins++) await new Promise((r) => setTimeout(r, 1));
    const ms = performance.now() - t0;
    const written = w.stats().written;
    w.close();
    if (written !== rows) throw new Error(`auto-flushing writer wrote ${written} of ${rows} rows`);
    return { label: 'DecisionLogWriter, its own timers (as in a node)', rows, ms, transactions: w.stats().flushes };
  } finally {
    db.close();
  }
}

/** Baseline: the same INSERT and parameters, one autocommitted statement (one transaction) per row. */
function writeNaive(scope: BenchScope, rows: number): WriteResult {
  const db = openStore(scope.tempDir());
  try {
    const cols = DECISION_FIELDS.filter((f) => f !== 'id').map((f) => DECISION_COLUMNS[f]);
    const insert = db.prepare(
      `INSERT INTO offload_decisions (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`,
    );
    const t0 = performance.now();
    for (let i = 0; i < rows; i++) insert.run(toDbParams(completeDecision(benchDraft(i)), 'owner', 'bench'));
    const ms = performance.now() - t0;
    if (count(db) !== rows) throw new Error(`naive insert wrote ${count(db)} of ${rows} rows`);
    return { label: 'naive: one INSERT per row (autocommit)', rows, ms, transactions: rows };
  } finally {
    db.close();
  }
}

function nodeStore(scope: BenchScope, nodeId: string, rows: number, offset: number): Db {
  const db = openStore(scope.tempDir());
  const w = new DecisionLogWriter(db, { nodeId, retentionMs: 0, autoFlush: false });
  for (let i = 0; i < rows; i++) {
    w.add({ ...benchDraft(i, nodeId), at: START + i * 7 + offset });
    if (w.pending >= 5000) w.flush();
  }
  w.close();
  return db;
}

interface ReadResult {
  label: string;
  pages: number;
  rows: number;
  times: number[];
}

/** Pages through the log newest first (`pages` pages of `limit`), timing each page. */
function readPages(label: string, pages: number, page: (cursor: string | null) => DecisionPage): ReadResult {
  const times: number[] = [];
  let cursor: string | null = null;
  let rows = 0;
  for (let p = 0; p < pages; p++) {
    const t0 = performance.now();
    const got = page(cursor);
    times.push(performance.now() - t0);
    rows += got.rows.length;
    cursor = got.nextCursor;
    if (!cursor) cursor = null; // start over at the newest page
  }
  return { label, pages, rows, times };
}

export const decisionLog: Benchmark = {
  name: 'decision-log',
  about: 'decision log writes (batched writer vs one INSERT per row) and a gathered page of 200 over 3 nodes',
  async run(o: BenchOptions): Promise<BenchResult> {
    const rows = 100_000;
    const naiveRows = o.quick ? 20_000 : 100_000;
    const perNode = o.quick ? 20_000 : 50_000;
    const pages = o.quick ? 100 : 400;
    const scope = new BenchScope();
    try {
      // The baseline first and last: a noisy disk shows as a spread between the two.
      const naive1 = writeNaive(scope, naiveRows / 2);
      o.log('decision-log: naive writes (1/2) done');
      const batched = writeBatched(scope, rows, 500);
      const auto = await writeAuto(scope, rows);
      o.log('decision-log: writer done');
      const naive2 = writeNaive(scope, naiveRows / 2);
      const naive: WriteResult = {
        ...naive1,
        rows: naive1.rows + naive2.rows,
        ms: naive1.ms + naive2.ms,
        transactions: naive1.transactions + naive2.transactions,
      };
      const rate = (w: WriteResult) => w.rows / (w.ms / 1000);
      const writeRows: Cell[][] = [naive, batched, auto].map((w) => [
        w.label,
        w.rows,
        w.transactions,
        formatNumber(w.ms, 0),
        formatNumber(rate(w), 0),
        formatNumber((w.ms * 1000) / w.rows, 2),
        formatRatio(ratio(rate(w), rate(naive))),
      ]);

      const nodes: Record<string, Db> = {
        owner: nodeStore(scope, 'owner', perNode, 0),
        helper: nodeStore(scope, 'helper', perNode, 3),
        master: nodeStore(scope, 'master', perNode, 5),
      };
      o.log('decision-log: 3 node logs written');
      try {
        const limit = 200;
        const gathered =
          (filter: Record<string, unknown>) =>
          (cursor: string | null): DecisionPage => {
            const state = decodeMergedCursor(cursor);
            const sources: NodeLogPage[] = Object.entries(nodes).map(([key, db]) => {
              const c = nodeCursor(state, key);
              return { key, page: c.done ? null : queryDecisions(db, { ...filter, cursor: c.cursor, limit }) };
            });
            return mergeNodePages(sources, limit, state);
          };
        const reads: ReadResult[] = [];
        // Alternate the single-node baseline with the gathered read, twice, to spread drift.
        for (let r = 0; r < 2; r++) {
          reads.push(
            readPages('1 node, page of 200 (baseline)', pages / 2, (cursor) =>
              queryDecisions(nodes.owner, { cursor, limit }),
            ),
          );
          reads.push(readPages('3 nodes, query each + merge, page of 200', pages / 2, gathered({})));
          reads.push(
            readPages(
              '3 nodes, filtered (plan, granted) + merge',
              pages / 2,
              gathered({ kind: 'plan', outcome: 'granted' }),
            ),
          );
        }
        const merged = new Map<string, ReadResult>();
        for (const r of reads) {
          const m = merged.get(r.label);
          if (m)
            merged.set(r.label, {
              ...m,
              pages: m.pages + r.pages,
              rows: m.rows + r.rows,
              times: [...m.times, ...r.times],
            });
          else merged.set(r.label, r);
        }
        const readResults = [...merged.values()];
        const baseP50 = percentile(readResults[0].times, 50);
        const readRows: Cell[][] = readResults.map((r) => {
          const total = r.times.reduce((s, t) => s + t, 0);
          const p50 = percentile(r.times, 50);
          return [
            r.label,
            r.pages,
            formatNumber(r.rows / r.pages, 0),
            formatNumber(p50, 3),
            formatNumber(percentile(r.times, 95), 3),
            formatNumber(r.rows / (total / 1000), 0),
            formatRatio(ratio(p50, baseP50)),
          ];
        });
        const gatheredRead = readResults[1];
        return {
          tables: [
            {
              title: 'decision-log writes: realistic rows into router.db (WAL, synchronous NORMAL)',
              columns: ['writer', 'rows', 'transactions', 'total ms', 'rows/s', 'µs/row', 'rows/s ÷ naive'],
              rows: writeRows,
              notes: [
                'the naive baseline runs in two halves, before and after the writer, on fresh files of the same kind.',
              ],
            },
            {
              title: `decision-log reads: newest-first pages, ${perNode.toLocaleString('en')} rows per node, following the cursor`,
              columns: ['read', 'pages', 'rows/page', 'p50 ms/page', 'p95 ms/page', 'rows/s', 'p50 ÷ 1 node'],
              rows: readRows,
              notes: [
                "gathered reads query each node's SQLite file in turn (in-process, no HTTP) and merge with mergeNodePages.",
              ],
            },
          ],
          summary: [
            {
              benchmark: 'decision-log',
              measure: 'writer rows/s, flush every 500',
              value: formatNumber(rate(batched), 0),
              ratio: ratio(rate(batched), rate(naive)),
              against: 'one INSERT per row',
            },
            {
              benchmark: 'decision-log',
              measure: 'page of 200 over 3 nodes, p50 ms',
              value: formatNumber(percentile(gatheredRead.times, 50), 3),
              ratio: ratio(percentile(gatheredRead.times, 50), baseP50),
              against: '1 node page of 200',
            },
          ],
        };
      } finally {
        for (const db of Object.values(nodes)) db.close();
      }
    } finally {
      await scope.close();
    }
  },
};

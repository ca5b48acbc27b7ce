/**
 * lending-log: the Lending tab's log at scale.
 *   fold:   the fold the Lending tab runs (the renderer's `foldDecisions` is the contract's `foldDecisionRows`, kept so by
 *           test/unit/lending-console-parity.test.ts) over a 100,000-row log, newest first, against the 500 ms target;
 *           the tab then builds lines only for the page it shows.
 *   export: a real node streams its decision log of 1,000,000 rows (200,000 with --quick) as CSV; its RSS is sampled
 *           while it does, and compared with an export of a tenth of the rows: flat memory means the same growth.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { type DecisionRowWire, foldDecisionRows } from '../contract';
import { completeDecision, DecisionLogWriter, openStore } from '../store';
import { benchDraft } from './decision-log';
import { vmRssMb } from './faults-count';
import { BENCH_CONSOLE_TOKEN, BenchScope } from './scope';
import { type Cell, formatNumber, formatRatio, ratio } from './table';
import type { Benchmark, BenchOptions, BenchResult } from './types';

const FOLD_ROWS = 100_000;
const FOLD_TARGET_MS = 500;

/** Wire rows as the console receives them: realistic drafts, runs of repeats (what folds), newest first. */
function wireRows(n: number): DecisionRowWire[] {
  const rows: DecisionRowWire[] = [];
  for (let i = n - 1; i >= 0; i--) {
    const input = completeDecision(benchDraft(Math.floor(i / 4)));
    rows.push({
      ...input,
      at: input.at + (i % 4),
      id: i + 1,
      nodeId: i % 7 === 0 ? 'helper' : 'owner',
      routerVersion: '0.1.0',
    } as DecisionRowWire);
  }
  return rows;
}

function timeFold(rows: DecisionRowWire[]): { ms: number; lines: number } {
  const t0 = performance.now();
  const lines = foldDecisionRows(rows);
  return { ms: performance.now() - t0, lines: lines.length };
}

const rssOf = (pid: number) => {
  try {
    return vmRssMb(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return null;
  }
};

/** Streams the export and samples the node's RSS meanwhile: bytes, time, RSS before and at its highest. */
function exportOnce(
  url: string,
  pid: number,
  max: number,
): Promise<{ bytes: number; ms: number; rssBefore: number | null; rssPeak: number | null }> {
  return new Promise((resolve, reject) => {
    const rssBefore = rssOf(pid);
    let rssPeak = rssBefore;
    const sample = setInterval(() => {
      const r = rssOf(pid);
      if (r !== null && (rssPeak === null || r > rssPeak)) rssPeak = r;
    }, 20);
    const t0 = performance.now();
    let bytes = 0;
    const req = request(
      `${url}/router/v1/console/decisions/export?format=csv&max=${max}`,
      { headers: { authorization: `Bearer ${BENCH_CONSOLE_TOKEN}` } },
      (res) => {
        if (res.statusCode !== 200) {
          clearInterval(sample);
          return reject(new Error(`export: HTTP ${res.statusCode}`));
        }
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => {
          clearInterval(sample);
          resolve({ bytes, ms: performance.now() - t0, rssBefore, rssPeak });
        });
        res.on('error', reject);
      },
    );
    req.on('error', (err) => {
      clearInterval(sample);
      reject(err);
    });
    req.end();
  });
}

export const lendingLog: Benchmark = {
  name: 'lending-log',
  about: 'the Lending tab folding a 100k-row log, and a node streaming a 1M-row decision-log export in flat memory',
  async run(o: BenchOptions): Promise<BenchResult> {
    const rows = wireRows(FOLD_ROWS);
    timeFold(rows.slice(0, 5_000)); // warm the code paths
    const folds = Array.from({ length: o.quick ? 2 : 4 }, () => timeFold(rows));
    const fold = folds.reduce((a, b) => (b.ms < a.ms ? b : a));
    o.log(`lending-log: fold of ${FOLD_ROWS} rows in ${formatNumber(fold.ms, 0)} ms`);

    const total = o.quick ? 200_000 : 1_000_000;
    const scope = new BenchScope();
    try {
      const node = await scope.startNode({}, { cluster: { offload_decisions_retention: '30d' } });
      // Written beside the running node (WAL: a second connection), recent enough to stay inside the retention.
      const db = openStore(join(node.dir!, 'store'));
      const w = new DecisionLogWriter(db, { nodeId: 'bench', retentionMs: 0, autoFlush: false });
      const base = Date.now() - total;
      for (let i = 0; i < total; i++) {
        w.add({ ...benchDraft(i), at: base + i });
        if (w.pending >= 1000) w.flush();
      }
      w.close();
      db.close();
      o.log(`lending-log: ${total.toLocaleString('en')} rows written`);
      const small = await exportOnce(node.url, node.proc.pid!, total / 10);
      const large = await exportOnce(node.url, node.proc.pid!, total);
      const growth = (r: typeof large) => (r.rssBefore === null || r.rssPeak === null ? null : r.rssPeak - r.rssBefore);
      const exportRows: Cell[][] = [
        [
          `${(total / 10).toLocaleString('en')} rows (baseline)`,
          formatNumber(small.bytes / 1e6, 1),
          formatNumber(small.ms, 0),
          formatNumber(total / 10 / (small.ms / 1000), 0),
          formatNumber(growth(small), 1),
          'baseline',
        ],
        [
          `${total.toLocaleString('en')} rows`,
          formatNumber(large.bytes / 1e6, 1),
          formatNumber(large.ms, 0),
          formatNumber(total / (large.ms / 1000), 0),
          formatNumber(growth(large), 1),
          formatRatio(ratio(growth(large), growth(small))),
        ],
      ];
      return {
        tables: [
          {
            title: `lending-log: the Lending tab's fold over ${FOLD_ROWS.toLocaleString('en')} rows, best of ${folds.length}`,
            columns: ['rows', 'lines', 'ms', 'target ms', 'ms ÷ target'],
            rows: [
              [
                FOLD_ROWS,
                fold.lines,
                formatNumber(fold.ms, 0),
                FOLD_TARGET_MS,
                formatRatio(ratio(fold.ms, FOLD_TARGET_MS)),
              ],
            ],
          },
          {
            title: 'lending-log: CSV export streamed by a real node, its RSS sampled every 20 ms',
            columns: ['export', 'MB', 'ms', 'rows/s', 'RSS growth MB', 'growth ÷ baseline'],
            rows: exportRows,
            notes: [
              "flat memory: the larger export grows the node's RSS about as much as the tenth-size one (a ratio near 1×, not 10×).",
            ],
          },
        ],
        summary: [
          {
            benchmark: 'lending-log',
            measure: `fold of ${FOLD_ROWS.toLocaleString('en')} rows`,
            value: `${formatNumber(fold.ms, 0)} ms`,
            ratio: ratio(fold.ms, FOLD_TARGET_MS),
            against: `${FOLD_TARGET_MS} ms target`,
          },
          {
            benchmark: 'lending-log',
            measure: `export of ${total.toLocaleString('en')} rows, RSS growth`,
            value: `${formatNumber(growth(large), 1)} MB`,
            ratio: ratio(growth(large), growth(small)),
            against: 'a tenth of the rows',
          },
        ],
      };
    } finally {
      await scope.close();
    }
  },
};

import { randomUUID } from 'node:crypto';
import type { BenchMachine, BenchRowWire, BenchRunDetail, BenchRunWire } from '../contract';
import type { Db } from './db';

/**
 * ASSET-1: benchmark runs in the store (tables `bench_runs`, `bench_rows`, migration 11). `routerdesk bench` writes
 * one run with every row when it ends; the console lists them newest first so a regression shows next to earlier runs.
 */

export interface BenchRunInput {
  startedAt: number;
  finishedAt: number;
  version: string;
  quick: boolean;
  benchmarks: string[];
  failed: string[];
  machine: BenchMachine;
  summary: { benchmark: string; measure: string; value: string; ratio: number | null; against: string }[];
  /** As `--json` writes them: `benchmark`, `scenario`, then the benchmark's own fields. */
  rows: ({ benchmark: string; scenario: string } & Record<string, unknown>)[];
}

interface RunRow {
  id: string;
  started_at: number;
  finished_at: number;
  version: string;
  quick: number;
  benchmarks: string;
  failed: string;
  machine: string;
  summary: string;
  row_count: number;
}

const RUN_COLUMNS =
  'r.id, r.started_at, r.finished_at, r.version, r.quick, r.benchmarks, r.failed, r.machine, r.summary, (SELECT COUNT(*) FROM bench_rows b WHERE b.run_id = r.id) AS row_count';

export class BenchStore {
  constructor(private readonly db: Db) {}

  /** Records one run and all its rows in one transaction; returns the run's id. */
  record(run: BenchRunInput): string {
    const id = randomUUID();
    const insertRun = this.db.prepare(
      'INSERT INTO bench_runs (id, started_at, finished_at, version, quick, benchmarks, failed, machine, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const insertRow = this.db.prepare(
      'INSERT INTO bench_rows (run_id, seq, benchmark, scenario, fields) VALUES (?, ?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      insertRun.run(
        id,
        run.startedAt,
        run.finishedAt,
        run.version,
        run.quick ? 1 : 0,
        JSON.stringify(run.benchmarks),
        JSON.stringify(run.failed),
        JSON.stringify(run.machine),
        JSON.stringify(run.summary),
      );
      run.rows.forEach(({ benchmark, scenario, ...fields }, seq) =>
        insertRow.run(id, seq, benchmark, scenario, JSON.stringify(fields)),
      );
    })();
    return id;
  }

  /** Runs newest first, at most `limit`. */
  list(limit = 50): BenchRunWire[] {
    return (
      this.db
        .prepare(`SELECT ${RUN_COLUMNS} FROM bench_runs r ORDER BY r.started_at DESC, r.id LIMIT ?`)
        .all(limit) as RunRow[]
    ).map(toWire);
  }

  /** One run with every row in order, or undefined. */
  get(id: string): BenchRunDetail | undefined {
    const run = this.db.prepare(`SELECT ${RUN_COLUMNS} FROM bench_runs r WHERE r.id = ?`).get(id) as RunRow | undefined;
    if (!run) return undefined;
    const rows = this.db
      .prepare('SELECT benchmark, scenario, fields FROM bench_rows WHERE run_id = ? ORDER BY seq')
      .all(id) as { benchmark: string; scenario: string; fields: string }[];
    return {
      run: toWire(run),
      rows: rows.map(
        (r): BenchRowWire => ({
          benchmark: r.benchmark,
          scenario: r.scenario,
          fields: JSON.parse(r.fields) as Record<string, unknown>,
        }),
      ),
    };
  }
}

function toWire(r: RunRow): BenchRunWire {
  return {
    id: r.id,
    startedAt: new Date(r.started_at).toISOString(),
    finishedAt: new Date(r.finished_at).toISOString(),
    version: r.version,
    quick: r.quick === 1,
    benchmarks: JSON.parse(r.benchmarks) as string[],
    failed: JSON.parse(r.failed) as string[],
    machine: JSON.parse(r.machine) as BenchMachine,
    summary: JSON.parse(r.summary) as BenchRunWire['summary'],
    rowCount: r.row_count,
  };
}

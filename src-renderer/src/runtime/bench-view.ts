import type { BenchRunWire } from '../../../src-router/contract';
import { DASH } from '../format';
import { formatBytes } from './runtime-format';

/**
 * The Benchmark runs card of the Runtime screen (ASSET-1), pure: each run `routerdesk bench` kept in the node's
 * store, newest first, with its version and machine, and each summary line beside the same line of the previous
 * run of the same kind (full or quick), so a regression shows as a change of ratio. Tested in renderer-bench-view.test.ts.
 */

export interface BenchLineView {
  key: string;
  benchmark: string;
  measure: string;
  value: string;
  ratio: string;
  /** The same line's ratio in the previous run of the same kind, `—` when there is none. */
  previous: string;
  /** Relative change of the ratio against it (`+12%`, `−3%`, `0%`), `—` when either is unknown. */
  change: string;
  against: string;
}

export interface BenchRunView {
  id: string;
  started: string;
  startedTitle: string;
  version: string;
  kind: 'full' | 'quick';
  machine: string;
  benchmarks: string;
  /** `2 failed: faults, …` or null. */
  failed: string | null;
  rows: string;
  lines: BenchLineView[];
}

const formatRatioCell = (r: number | null | undefined) =>
  r === null || r === undefined || !Number.isFinite(r) ? DASH : `${r >= 10 ? r.toFixed(1) : r.toFixed(2)}×`;

export function ratioChange(now: number | null, before: number | null | undefined): string {
  if (
    now === null ||
    before === null ||
    before === undefined ||
    !Number.isFinite(now) ||
    !Number.isFinite(before) ||
    before === 0
  )
    return DASH;
  const pct = Math.round(((now - before) / Math.abs(before)) * 100);
  return pct > 0 ? `+${pct}%` : pct < 0 ? `−${-pct}%` : '0%';
}

const isoText = (iso: string) => {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return DASH;
  const d = new Date(t);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
};

/** `runs` newest first, as the node answers them. */
export function benchRunViews(runs: readonly BenchRunWire[]): BenchRunView[] {
  return runs.map((run, i) => {
    const older = runs.slice(i + 1).filter((r) => r.quick === run.quick);
    return {
      id: run.id,
      started: isoText(run.startedAt),
      startedTitle: run.startedAt,
      version: run.version,
      kind: run.quick ? 'quick' : 'full',
      machine: `${run.machine.hostname} · ${run.machine.cores} cores · ${run.machine.cpu} · ${formatBytes(run.machine.memoryBytes)} · node ${run.machine.node}`,
      benchmarks: run.benchmarks.join(', '),
      failed: run.failed.length ? `${run.failed.length} failed: ${run.failed.join(', ')}` : null,
      rows: String(run.rowCount),
      lines: run.summary.map((l, j) => {
        const before = older
          .map((r) => r.summary.find((x) => x.benchmark === l.benchmark && x.measure === l.measure))
          .find((x) => x !== undefined);
        return {
          key: `${j}:${l.benchmark}:${l.measure}`,
          benchmark: l.benchmark,
          measure: l.measure,
          value: l.value,
          ratio: formatRatioCell(l.ratio),
          previous: before ? formatRatioCell(before.ratio) : DASH,
          change: ratioChange(l.ratio, before?.ratio),
          against: l.against,
        };
      }),
    };
  });
}

export const NO_BENCH_RUNS =
  'No benchmark run is kept in this node’s store. Run `routerdesk bench --store <store_dir>` to keep one.';

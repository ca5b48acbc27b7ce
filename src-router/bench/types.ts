import type { Table } from './table';

export interface BenchOptions {
  /** Smaller counts and fewer repetitions (the whole run in well under a minute). */
  quick: boolean;
  /** Progress lines (stderr), never part of the tables. */
  log(line: string): void;
  /** `--scenario`: run only these scenarios of a benchmark that has several (all when absent). */
  scenarios?: string[];
}

/** One line of the final summary: the benchmark's headline number and its ratio against its baseline. */
export interface SummaryLine {
  benchmark: string;
  measure: string;
  value: string;
  ratio: number | null;
  /** What the ratio divides by. */
  against: string;
}

/** One machine-readable result (`--json`): `benchmark`, `scenario`, then the benchmark's own fields. */
export type JsonRow = { benchmark: string; scenario: string } & Record<string, unknown>;

export interface BenchResult {
  tables: Table[];
  summary: SummaryLine[];
  /** Machine-readable rows; when absent, `--json` writes one row per table row (columns as fields). */
  json?: JsonRow[];
}

export interface Benchmark {
  name: string;
  /** One line for `--help`. */
  about: string;
  run(options: BenchOptions): Promise<BenchResult>;
}

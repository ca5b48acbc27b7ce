import type { Table } from './table';

export interface BenchOptions {
  /** Smaller counts and fewer repetitions (the whole run in well under a minute). */
  quick: boolean;
  /** Progress lines (stderr), never part of the tables. */
  log(line: string): void;
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

export interface BenchResult {
  tables: Table[];
  summary: SummaryLine[];
}

export interface Benchmark {
  name: string;
  /** One line for `--help`. */
  about: string;
  run(options: BenchOptions): Promise<BenchResult>;
}

/**
 * `routerdesk bench [--quick] [--only NAME[,NAME]]`: runs the benchmarks one after another and prints one table
 * each (stdout) and a final summary. Progress goes to stderr. Whatever a benchmark starts is stopped when it ends;
 * on an interrupt or exit, leftovers are killed and temp folders removed. A benchmark that fails is reported and
 * the others still run (exit code 1).
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROUTER_VERSION } from '../version';
import { decisionLog } from './decision-log';
import { faults } from './faults';
import { benchMachine, defaultBenchStore, keepRun } from './keep-run';
import { lendingLog } from './lending-log';
import { lendingMakespan } from './lending-makespan';
import { lendingScenarios } from './lending-scenarios';
import { plannerScale } from './planner-scale';
import { proxyOverhead } from './proxy-overhead';
import { replayLoad } from './replay-load';
import { killAllNow, profileNodesInto } from './scope';
import { type Cell, DASH, formatDuration, formatRatio, renderTable, type Table } from './table';
import { timelineLayoutBench } from './timeline-layout';
import type { Benchmark, JsonRow, SummaryLine } from './types';

export const BENCHMARKS: Benchmark[] = [
  proxyOverhead,
  lendingMakespan,
  lendingScenarios,
  faults,
  plannerScale,
  decisionLog,
  lendingLog,
  timelineLayoutBench,
  replayLoad,
];

export const BENCH_USAGE = `usage: routerdesk bench [--quick] [--only NAME[,NAME…]] [--json FILE] [--cpu-prof DIR]

  --quick        smaller counts, one repetition
  --only NAME    run only these benchmarks (repeat the flag or separate names with commas)
  --scenario S   only these scenarios of benchmarks that have several (lending-scenarios)
  --json FILE    also write every result as JSON: an array, one object per scenario (benchmark, scenario, fields)
  --store DIR    keep the run (version, machine, summary, every row) in this node store; default: the store of
                 the serve folder (.routerdesk/); the console lists kept runs (Runtime screen, Benchmark runs)
  --cpu-prof DIR every router node a benchmark starts writes a V8 CPU profile into DIR when it stops
                 (open it in Chrome DevTools): where the time of a benchmark's requests goes

benchmarks:
${BENCHMARKS.map((b) => `  ${b.name.padEnd(18)}${b.about}`).join('\n')}

Every table prints absolute numbers and a ratio against a baseline measured in the same run.
`;

export class BenchUsageError extends Error {
  readonly code = 'bench_usage';
}

/** Which benchmarks to run, in table order; throws BenchUsageError naming an unknown one. */
export function selectBenchmarks(only: string[] | undefined, all: Benchmark[] = BENCHMARKS): Benchmark[] {
  const names = (only ?? [])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) return all;
  const unknown = names.filter((n) => !all.some((b) => b.name === n));
  if (unknown.length)
    throw new BenchUsageError(
      `unknown benchmark${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (known: ${all.map((b) => b.name).join(', ')})`,
    );
  return all.filter((b) => names.includes(b.name));
}

function onSignal(signal: NodeJS.Signals) {
  process.stderr.write(`\nbench: ${signal}, stopping what it started\n`);
  killAllNow();
  process.exit(130);
}

export async function benchCommand(argv: string[]): Promise<void> {
  let values: {
    quick?: boolean;
    only?: string[];
    help?: boolean;
    json?: string;
    scenario?: string[];
    store?: string;
    'cpu-prof'?: string;
  };
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        quick: { type: 'boolean' },
        only: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
        json: { type: 'string' },
        scenario: { type: 'string', multiple: true },
        store: { type: 'string' },
        'cpu-prof': { type: 'string' },
      },
    }).values;
  } catch (err) {
    process.stderr.write(`routerdesk bench: ${(err as Error).message}\n\n${BENCH_USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (values.help) {
    process.stdout.write(BENCH_USAGE);
    return;
  }
  let selected: Benchmark[];
  try {
    selected = selectBenchmarks(values.only);
  } catch (err) {
    if (!(err instanceof BenchUsageError)) throw err;
    process.stderr.write(`routerdesk bench: ${err.message}\n`);
    process.exitCode = 2;
    return;
  }

  const quick = values.quick === true;
  if (values['cpu-prof']) profileNodesInto(resolve(values['cpu-prof']));
  process.on('exit', killAllNow);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const out = (text: string) => process.stdout.write(text);
  const log = (line: string) => process.stderr.write(`  · ${line}\n`);
  const started = performance.now();
  const startedAt = Date.now();
  out(
    `routerdesk bench ${quick ? '--quick ' : ''}· router ${ROUTER_VERSION} · node ${process.version} · ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown cpu'})\n`,
  );
  out(
    'Absolute numbers vary from machine to machine and run to run; compare the ratios (each against a baseline measured in the same run).\n\n',
  );

  const summary: SummaryLine[] = [];
  const json: JsonRow[] = [];
  const failed: string[] = [];
  const timings: [string, number][] = [];
  for (const b of selected) {
    const t0 = performance.now();
    process.stderr.write(`▶ ${b.name}\n`);
    try {
      const scenarios = values.scenario
        ?.flatMap((x) => x.split(','))
        .map((x) => x.trim())
        .filter(Boolean);
      const result = await b.run({ quick, log, scenarios });
      for (const table of result.tables) out(`${renderTable(table)}\n`);
      summary.push(...result.summary);
      json.push(...(result.json ?? tableRows(b.name, result.tables)));
    } catch (err) {
      failed.push(b.name);
      json.push({ benchmark: b.name, scenario: 'FAILED', error: (err as Error)?.message ?? String(err) });
      out(`${b.name}: FAILED: ${(err as Error)?.stack ?? String(err)}\n\n`);
    }
    timings.push([b.name, performance.now() - t0]);
  }

  out(
    renderTable({
      title: `summary (${quick ? 'quick' : 'full'} run, ${formatDuration(performance.now() - started)}: ${timings.map(([n, ms]) => `${n} ${formatDuration(ms)}`).join(', ')})`,
      columns: [
        'benchmark',
        { header: 'measure', align: 'left' },
        'value',
        'ratio',
        { header: 'against', align: 'left' },
      ],
      rows: [
        ...summary.map((s) => [s.benchmark, s.measure, s.value, formatRatio(s.ratio), s.against]),
        ...failed.map((n) => [n, 'FAILED (see above)', null, null, null]),
      ],
    }),
  );
  if (values.json) {
    writeFileSync(values.json, `${JSON.stringify(json, null, 2)}\n`);
    process.stderr.write(`bench: wrote ${json.length} results to ${values.json}\n`);
  }
  // ASSET-1: the run is kept in the node's store, so the console can list it beside earlier runs.
  const storeDir = resolve(values.store ?? defaultBenchStore());
  try {
    const id = keepRun(storeDir, {
      startedAt,
      finishedAt: Date.now(),
      version: ROUTER_VERSION,
      quick,
      benchmarks: selected.map((b) => b.name),
      failed,
      machine: benchMachine(),
      summary: summary.map((l) => ({ ...l, ratio: l.ratio !== null && Number.isFinite(l.ratio) ? l.ratio : null })),
      rows: json,
    });
    process.stderr.write(`bench: kept run ${id} (${json.length} rows) in ${storeDir}\n`);
  } catch (err) {
    process.stderr.write(`bench: run not kept in ${storeDir}: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  if (failed.length) process.exitCode = 1;
}

/**
 * `--json` for a benchmark that gives no rows of its own: one object per table row, the first column as the
 * scenario and every other column under its header (numbers as numbers, the dash as null).
 */
export function tableRows(benchmark: string, tables: Table[]): JsonRow[] {
  const rows: JsonRow[] = [];
  for (const t of tables) {
    const headers = t.columns.map((c) => (typeof c === 'string' ? c : c.header));
    for (const r of t.rows) {
      const row: JsonRow = { benchmark, scenario: String(r[0] ?? ''), table: t.title };
      headers.slice(1).forEach((h, i) => (row[h] = jsonValue(r[i + 1])));
      rows.push(row);
    }
  }
  return rows;
}

function jsonValue(cell: Cell): string | number | null {
  if (cell === null || cell === undefined || cell === DASH) return null;
  if (typeof cell === 'number') return cell;
  const n = Number(cell.replace(/,/g, '').replace(/×$/, ''));
  return cell.trim() !== '' && Number.isFinite(n) ? n : cell;
}

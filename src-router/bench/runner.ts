/**
 * `routerdesk bench [--quick] [--only NAME[,NAME]]`: runs the benchmarks one after another and prints one table
 * each (stdout) and a final summary. Progress goes to stderr. Whatever a benchmark starts is stopped when it ends;
 * on an interrupt or exit, leftovers are killed and temp folders removed. A benchmark that fails is reported and
 * the others still run (exit code 1).
 */
import { availableParallelism, cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { ROUTER_VERSION } from '../version';
import { decisionLog } from './decision-log';
import { lendingMakespan } from './lending-makespan';
import { plannerScale } from './planner-scale';
import { proxyOverhead } from './proxy-overhead';
import { killAllNow } from './scope';
import { formatDuration, formatRatio, renderTable } from './table';
import type { Benchmark, SummaryLine } from './types';

export const BENCHMARKS: Benchmark[] = [proxyOverhead, lendingMakespan, plannerScale, decisionLog];

export const BENCH_USAGE = `usage: routerdesk bench [--quick] [--only NAME[,NAME…]]

  --quick        smaller counts, one repetition (well under a minute)
  --only NAME    run only these benchmarks (repeat the flag or separate names with commas)

benchmarks:
${BENCHMARKS.map((b) => `  ${b.name.padEnd(18)}${b.about}`).join('\n')}

Every table prints absolute numbers and a ratio against a baseline measured in the same run.
`;

export class BenchUsageError extends Error {
  readonly code = 'bench_usage';
}

/** Which benchmarks to run, in table order; throws BenchUsageError naming an unknown one. */
export function selectBenchmarks(only: string[] | undefined, all: Benchmark[] = BENCHMARKS): Benchmark[] {
  const names = (only ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) return all;
  const unknown = names.filter((n) => !all.some((b) => b.name === n));
  if (unknown.length) throw new BenchUsageError(`unknown benchmark${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (known: ${all.map((b) => b.name).join(', ')})`);
  return all.filter((b) => names.includes(b.name));
}

function onSignal(signal: NodeJS.Signals) {
  process.stderr.write(`\nbench: ${signal}, stopping what it started\n`);
  killAllNow();
  process.exit(130);
}

export async function benchCommand(argv: string[]): Promise<void> {
  let values: { quick?: boolean; only?: string[]; help?: boolean };
  try {
    values = parseArgs({
      args: argv, strict: true, allowPositionals: false,
      options: { quick: { type: 'boolean' }, only: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } },
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
  process.on('exit', killAllNow);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const out = (text: string) => process.stdout.write(text);
  const log = (line: string) => process.stderr.write(`  · ${line}\n`);
  const started = performance.now();
  out(`routerdesk bench ${quick ? '--quick ' : ''}· router ${ROUTER_VERSION} · node ${process.version} · ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown cpu'})\n`);
  out('Absolute numbers vary from machine to machine and run to run; compare the ratios (each against a baseline measured in the same run).\n\n');

  const summary: SummaryLine[] = [];
  const failed: string[] = [];
  const timings: [string, number][] = [];
  for (const b of selected) {
    const t0 = performance.now();
    process.stderr.write(`▶ ${b.name}\n`);
    try {
      const result = await b.run({ quick, log });
      for (const table of result.tables) out(`${renderTable(table)}\n`);
      summary.push(...result.summary);
    } catch (err) {
      failed.push(b.name);
      out(`${b.name}: FAILED: ${(err as Error)?.stack ?? String(err)}\n\n`);
    }
    timings.push([b.name, performance.now() - t0]);
  }

  out(renderTable({
    title: `summary (${quick ? 'quick' : 'full'} run, ${formatDuration(performance.now() - started)}: ${timings.map(([n, ms]) => `${n} ${formatDuration(ms)}`).join(', ')})`,
    columns: ['benchmark', { header: 'measure', align: 'left' }, 'value', 'ratio', { header: 'against', align: 'left' }],
    rows: [
      ...summary.map((s) => [s.benchmark, s.measure, s.value, formatRatio(s.ratio), s.against]),
      ...failed.map((n) => [n, 'FAILED (see above)', null, null, null]),
    ],
  }));
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  if (failed.length) process.exitCode = 1;
}

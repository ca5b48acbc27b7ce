/**
 * faults: the fault-injection suite. Each scenario runs against real `routerdesk node` processes (and,
 * for redis-restart, a real redis-server), injects its fault, and reports every client's answer: `sent`, `ok`,
 * `clear_error` (with `errors`, code → count), `lost`, `run_twice`, and the nodes' `rss_before_mb` /
 * `rss_after_mb`. The target of every row: 0 lost, 0 run twice (the network rows: a run twice only where no one could
 * reach the helper, as the helper reported it). Definitions in faults-count.ts; scenarios in faults-node.ts,
 * faults-lending.ts, faults-corpus.ts and faults-network.ts (nodes on their own network hosts).
 */
import { badInputs } from './faults-corpus';
import { errorSummary, type FaultRow } from './faults-count';
import { helperKilled, masterKilled, slaveKilledMidStream } from './faults-lending';
import { netFaultScenarios } from './faults-network';
import { engineFrozen, queueFlood, redisRestart, stalledReaders } from './faults-node';
import { pausedNonStreamed } from './faults-paused';
import { formatNumber } from './table';
import type { Benchmark, BenchOptions, BenchResult } from './types';

/** The fault scenarios in the order the bench runs and reports them. */
export const FAULT_SCENARIOS: { name: string; run(o: BenchOptions): Promise<FaultRow> }[] = [
  { name: 'queue-flood', run: queueFlood },
  { name: 'helper-killed', run: helperKilled },
  { name: 'master-killed', run: masterKilled },
  { name: 'slave-killed-mid-stream', run: slaveKilledMidStream },
  { name: 'redis-restart', run: redisRestart },
  { name: 'engine-frozen', run: engineFrozen },
  { name: 'stalled-readers', run: stalledReaders },
  { name: 'paused-non-streamed', run: pausedNonStreamed },
  { name: 'bad-inputs', run: badInputs },
  ...netFaultScenarios,
];

export const faults: Benchmark = {
  name: 'faults',
  about:
    'fault injection on real nodes: floods, kill -9 of helper/master/slave, Redis restart, frozen engine, stalled readers, paused readers of whole answers, bad inputs: 0 lost, 0 run twice',
  async run(o: BenchOptions): Promise<BenchResult> {
    const known = FAULT_SCENARIOS.map((s) => s.name);
    const unknown = (o.scenarios ?? []).filter((n) => !known.includes(n));
    if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')} (known: ${known.join(', ')})`);
    const rows: FaultRow[] = [];
    for (const s of FAULT_SCENARIOS) {
      if (o.scenarios?.length && !o.scenarios.includes(s.name)) continue;
      const t0 = performance.now();
      try {
        rows.push(await s.run(o));
      } catch (err) {
        // One scenario that cannot run is reported; the others still run.
        o.log(`${s.name}: FAILED: ${(err as Error)?.stack ?? String(err)}`);
        rows.push(failedRow(s.name, (err as Error)?.message ?? String(err)));
      }
      o.log(`${s.name}: done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
    return report(rows);
  },
};

function failedRow(scenario: string, error: string): FaultRow {
  return {
    benchmark: 'faults',
    scenario,
    sent: 0,
    ok: 0,
    clear_error: 0,
    errors: {},
    lost: 0,
    run_twice: 0,
    rss_before_mb: 0,
    rss_after_mb: 0,
    unclear_error: 0,
    unclear: {},
    cut: 0,
    lost_reset: 0,
    lost_timeout: 0,
    seen_twice: 0,
    answered_twice: 0,
    reached_engines: 0,
    note: `FAILED: ${error}`,
    meets: false,
    error,
  };
}

/** The cell that says what else the row shows: cut streams, stalled readers, failed bad inputs, health afterwards. */
function otherCell(r: FaultRow): string {
  const parts: string[] = [];
  if (r.cut) parts.push(`${r.cut} cut`);
  if (r.unclear_error) parts.push(`${r.unclear_error} unclear`);
  if (typeof r.stalled_cut === 'number')
    parts.push(
      `${r.stalled_cut}/${String(r.stalled)} stalled cut, ${String(r.stalled_not_cut)} not, ${String(r.others_not_ok)} others not ok`,
    );
  if (r.scenario === 'bad-inputs' && typeof r.failures === 'number')
    parts.push(
      `${(r.inputs as unknown[] | undefined)?.length ?? 0} inputs, ${r.failures} not a clear 4xx (${String(r.five_xx)} 5xx)`,
    );
  if (r.scenario === 'queue-flood' && r.retry_after_missing)
    parts.push(`${String(r.retry_after_missing)} 429 without Retry-After`);
  if (r.fates && typeof r.fates === 'object') {
    const fates = Object.entries(r.fates as Record<string, number>)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    parts.push(
      `worst ${String(r.worst_ms)} ms (${String(r.worst_ratio)}× without the fault)${fates ? `; unknown fates: ${fates}` : ''}${r.run_twice_allowed ? `; ${String(r.run_twice_allowed)} run twice where no one reached the helper` : ''}`,
    );
  }
  if (r.healthy_after === false) parts.push('NOT healthy after');
  return parts.join('; ');
}

function report(rows: FaultRow[]): BenchResult {
  const mb = (v: number) => formatNumber(v, 0);
  const failedInputs = rows.flatMap((r) => (Array.isArray(r.failed_inputs) ? (r.failed_inputs as string[]) : []));
  return {
    tables: [
      {
        title: 'faults: fault injection on real nodes (target: 0 lost and 0 run twice in every row)',
        columns: [
          'scenario',
          'sent',
          'ok',
          'clear error',
          { header: 'which', align: 'left' },
          'lost',
          'run twice',
          'seen twice',
          'RSS MB before → after',
          { header: 'other', align: 'left' },
          '0 lost · 0 twice',
        ],
        rows: rows.map((r) => [
          r.scenario,
          r.sent,
          r.ok,
          r.clear_error,
          errorSummary(r.errors) || null,
          r.lost,
          r.run_twice,
          r.seen_twice,
          `${mb(r.rss_before_mb)} → ${mb(r.rss_after_mb)}`,
          otherCell(r) || null,
          r.meets ? 'yes' : 'NO',
        ]),
        notes: [
          'ok: a 2xx read to its end (a stream through [DONE]); clear error: an error status with a JSON error message, or an in-band',
          'error event in a stream; cut: a status arrived, then the connection closed early with no error event (the client knows at once,',
          'it does not hang); lost: no status at all (reset), or a client that waited past its time-out (30 s; 60 s in queue-flood): a hang.',
          "run twice: a request (a unique marker in its prompt) that got an engine slot at two engines, from the sim engines' seen rings",
          '(GET /sim/seen), cancelled runs at live engines included; a run at an engine the fault killed or froze (or whose node it killed)',
          'is not counted: its answer died with it and running the request again is the recovery. seen twice: the literal count, seen at',
          'two engines in any state (queued, running, killed, cancelled); answered twice (--json): completed at two engines.',
          'stalled-readers: the stalled clients are expected to be cut (stalled_cut), not counted as ok or lost; the others must all be ok.',
          "bad-inputs: every input must be a 4xx with a JSON error message (a push forged in the master's name: a 2xx marked ignored, the slave's links and guardian settings unchanged); any other answer counts as a failure (meets = NO).",
          "RSS: VmRSS of the scenario's node processes (not their engines); after: the nodes still alive.",
          ...rows.filter((r) => r.note).map((r) => `${r.scenario}: ${r.note}`),
          ...(failedInputs.length ? [`bad inputs not answered with a clear 4xx: ${failedInputs.join(', ')}`] : []),
        ],
      },
    ],
    summary: rows.map((r) => ({
      benchmark: 'faults',
      measure: `${r.scenario}: lost / run twice`,
      value: `${r.lost} / ${r.run_twice}${r.meets ? '' : ' (MISSES)'}`,
      ratio: null,
      against: '0 / 0',
    })),
    json: rows,
  };
}

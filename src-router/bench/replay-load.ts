/**
 * replay-load: a node's /health latency while it runs the largest what-if replay a console may ask for (a day's
 * range, a 10 ms refresh interval, REPLAY_MAX_EVENTS simulated events), against /health with no replay, measured in
 * the same run on the same node. The replay runs in a worker thread: the node's event loop keeps answering.
 * Target: /health p99 during the replay ≤ 50 ms.
 */
import { type Agent, request } from 'node:http';
import { join } from 'node:path';
import { REPLAY_MAX_EVENTS, REPLAY_MAX_RANGE_MS, type ReplayLinkWire, replayResultSchema } from '../contract/replay';
import { AnalyticsStore, openStore, type RequestRow } from '../store';
import { keepAliveAgent, postJson } from './http-client';
import { BENCH_CONSOLE_TOKEN, BenchScope } from './scope';
import { formatNumber, formatRatio, percentile, ratio } from './table';
import type { Benchmark, BenchOptions, BenchResult } from './types';

const HOUR = 3_600_000;

/**
 * Writes recorded requests into a node's store for a replay of [from, from + 24 h]: `longRequests` that arrive at
 * `from` and each hold model `m` for 23 h (the replay's lending ticks run all day long), and one short request.
 */
export function seedReplayStore(storeDir: string, nodeId: string, o: { from: number; longRequests: number }): void {
  const db = openStore(storeDir);
  const analytics = new AnalyticsStore(db, nodeId, { autoFlush: false });
  const row = (i: number, durationMs: number): RequestRow => ({
    finishedAt: o.from + durationMs + i,
    nodeId,
    model: 'm',
    localId: 'm',
    backend: 'replay-seed',
    endpoint: 'chat',
    streamed: false,
    promptBytes: 200,
    promptTokens: 50,
    tokensGenerated: 100,
    queueWaitMs: 0,
    durationMs,
    serviceMs: durationMs,
    serviceSource: 'engine',
    outcome: 'ok',
    requestId: `seed-${i}`,
  });
  for (let i = 0; i < o.longRequests; i++) analytics.recordRequest(row(i, 23 * HOUR));
  analytics.recordRequest(row(o.longRequests, 1_000));
  analytics.close();
  db.close();
}

/** The largest replay a console may ask for, over a store seeded by `seedReplayStore`: model `m` lends to `h` on `helper`. */
export function largestReplayBody(nodeId: string, from: number, maxEvents = REPLAY_MAX_EVENTS) {
  const links: ReplayLinkWire[] = [
    {
      lane: 'text',
      owner: { nodeId, model: 'm' },
      helper: { nodeId: 'helper', model: 'h' },
      loadIfUnloaded: true,
      restoreAfterBorrow: false,
    },
  ];
  return { from, to: from + REPLAY_MAX_RANGE_MS, settings: { scheduling_refresh_interval: 10 }, links, maxEvents };
}

function getHealth(url: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(`${url}/health`, { agent, timeout: 30_000 }, (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`/health: ${res.statusCode}`)),
      );
    });
    req.on('timeout', () => req.destroy(new Error('/health: no answer within 30 s')));
    req.on('error', reject);
    req.end();
  });
}

/** /health one request after another, `gapMs` apart, until `done()` (at least `min` samples). */
async function sampleHealth(url: string, agent: Agent, done: () => boolean, min: number, gapMs = 5): Promise<number[]> {
  const times: number[] = [];
  while (times.length < min || !done()) {
    times.push(await getHealth(url, agent));
    await new Promise((r) => setTimeout(r, gapMs));
  }
  return times;
}

export const replayLoad: Benchmark = {
  name: 'replay-load',
  about: "a node's /health p99 while it runs the largest allowed what-if replay vs with no replay",
  async run(o: BenchOptions): Promise<BenchResult> {
    const scope = new BenchScope();
    const agent = keepAliveAgent(4);
    try {
      const node = await scope.startNode({});
      const from = Date.now() - REPLAY_MAX_RANGE_MS;
      seedReplayStore(join(node.dir!, 'store'), 'bench', { from, longRequests: 1 });
      const baseline = await sampleHealth(node.url, agent, () => true, o.quick ? 200 : 1000);
      o.log(`replay-load: baseline /health p99 ${formatNumber(percentile(baseline, 99))} ms`);
      let answered = false;
      const t0 = performance.now();
      // --quick: a quarter of the event cap (the same replay, stopped earlier).
      const maxEvents = o.quick ? REPLAY_MAX_EVENTS / 4 : REPLAY_MAX_EVENTS;
      const replay = postJson(
        `${node.url}/router/v1/console/replay`,
        largestReplayBody('bench', from, maxEvents),
        agent,
        { authorization: `Bearer ${BENCH_CONSOLE_TOKEN}` },
      ).finally(() => (answered = true));
      const during = await sampleHealth(node.url, agent, () => answered, 20);
      const r = await replay;
      const replayMs = performance.now() - t0;
      // A machine too slow for the whole replay within its time budget still measures /health while it ran.
      const overBudget = r.status === 422 && r.body.includes('replay_time_budget');
      if (r.status !== 200 && !overBudget) throw new Error(`the replay answered ${r.status}: ${r.body.slice(0, 400)}`);
      const what = overBudget
        ? `stopped by its time budget after ${formatNumber(replayMs / 1000)} s`
        : (() => {
            const result = replayResultSchema.parse(JSON.parse(r.body));
            return `${result.events.toLocaleString('en-US')} simulated events${result.capped ? ', capped' : ''}, ${formatNumber(replayMs / 1000)} s`;
          })();
      o.log(`replay-load: the replay: ${what}`);
      const p99 = percentile(during, 99);
      const p99Base = percentile(baseline, 99);
      const row = (label: string, t: number[]) => [
        label,
        t.length,
        formatNumber(percentile(t, 50)),
        formatNumber(percentile(t, 99)),
        formatNumber(Math.max(...t)),
        formatRatio(ratio(percentile(t, 99), p99Base)),
      ];
      return {
        tables: [
          {
            title: `replay-load: /health latency during the largest replay (${what})`,
            columns: ['/health', 'requests', 'p50 ms', 'p99 ms', 'max ms', 'p99 ratio'],
            rows: [row('no replay (baseline)', baseline), row('during the replay', during)],
            notes: [
              `The replay: a 24 h range, scheduling_refresh_interval 10 ms, maxEvents ${maxEvents.toLocaleString('en-US')}${o.quick ? ' (--quick: a quarter of the cap)' : ' (the cap)'}, one link; it runs in a worker thread of the node.`,
              `Requests one after another, 5 ms apart, on one keep-alive connection. Target: p99 during the replay ≤ 50 ms (${p99 !== null && p99 <= 50 ? 'met' : 'NOT met'}).`,
            ],
          },
        ],
        summary: [
          {
            benchmark: 'replay-load',
            measure: '/health p99 during the largest replay',
            value: `${formatNumber(p99)} ms`,
            ratio: ratio(p99, p99Base),
            against: '/health p99 with no replay',
          },
        ],
      };
    } finally {
      agent.destroy();
      await scope.close();
    }
  },
};

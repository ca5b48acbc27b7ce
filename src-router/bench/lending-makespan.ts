/**
 * lending-makespan: a burst of K chat requests to an owner node, with and without lending, on a real cluster (a
 * master, an owner slave and a helper slave: three `routerdesk node` processes on loopback, sim engines with
 * token times so a job takes ~100 ms on the owner and ~60 ms on the helper).
 *   owner alone     no link: the owner's engine drains the whole burst
 *   naive stealing  no link: the clients round-robin the burst across the owner's and the helper's models
 *                   themselves (what a client-side balancer does)
 *   lending         a text link owner → helper: the owner lends held requests under leases from the master
 *   lower bound     K / (1/t_owner + 1/t_helper), with t measured as the warm sequential per-job time on each node
 * Each scenario runs R bursts; the table shows the median and best makespan and the ratio to the lower bound.
 */
import type { Agent } from 'node:http';
import type { ModelConfigInput } from '../config';
import { chat, keepAliveAgent } from './http-client';
import { Trio } from './lending-trio';
import { BenchScope, type CliProcess, sleep } from './scope';
import { type Cell, formatNumber, formatRatio, median, ratio } from './table';
import type { Benchmark, BenchOptions, BenchResult } from './types';

const MAX_TOKENS = 10;
const OWNER_TOKEN_MS = 10;
const HELPER_TOKEN_MS = 6;

const simModel = (name: string, tokenMs: number): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['text'],
  contextsize: 4096,
  parallel: 1,
  sim: { load_time: '100ms', token_time: `${tokenMs}ms` },
});

interface Burst {
  makespanMs: number;
  onOwner: number;
  onHelper: number;
}

async function burst(c: Trio, agent: Agent, targets: [CliProcess, string][]): Promise<Burst> {
  const [o0, h0] = [await c.engineRequests(c.owner), await c.engineRequests(c.helper)];
  const t0 = performance.now();
  await Promise.all(targets.map(([node, model]) => chat(node.url, model, agent, MAX_TOKENS)));
  const makespanMs = performance.now() - t0;
  const [o1, h1] = [await c.engineRequests(c.owner), await c.engineRequests(c.helper)];
  await c.settle();
  return { makespanMs, onOwner: o1 - o0, onHelper: h1 - h0 };
}

async function perJobMs(node: CliProcess, model: string, agent: Agent, n: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) times.push((await chat(node.url, model, agent, MAX_TOKENS)).totalMs);
  return median(times)!;
}

export const lendingMakespan: Benchmark = {
  name: 'lending-makespan',
  about: 'makespan of a burst to an owner: lending vs owner alone vs naive client round-robin vs the lower bound',
  async run(o: BenchOptions): Promise<BenchResult> {
    const K = o.quick ? 20 : 40;
    const reps = o.quick ? 1 : 3;
    const scope = new BenchScope();
    const agent = keepAliveAgent(K * 2);
    try {
      const c = await Trio.start(scope, {
        owner: { a: simModel('model-a', OWNER_TOKEN_MS) },
        helper: { b: simModel('model-b', HELPER_TOKEN_MS) },
      });
      o.log(`lending-makespan: cluster up (master ${c.master.url}, owner ${c.owner.url}, helper ${c.helper.url})`);
      // First requests load the models; the next ones give each node its own cost fit (min_samples 3) and the
      // per-job times the lower bound uses.
      await chat(c.owner.url, 'model-a', agent, MAX_TOKENS);
      await chat(c.helper.url, 'model-b', agent, MAX_TOKENS);
      const samples = o.quick ? 5 : 9;
      const tOwner = await perJobMs(c.owner, 'model-a', agent, samples);
      const tHelper = await perJobMs(c.helper, 'model-b', agent, samples);
      await c.settle();

      const alone: Burst[] = [];
      const naive: Burst[] = [];
      const helperAlone: Burst[] = [];
      for (let r = 0; r < reps; r++) {
        alone.push(
          await burst(
            c,
            agent,
            Array.from({ length: K }, () => [c.owner, 'model-a']),
          ),
        );
        naive.push(
          await burst(
            c,
            agent,
            Array.from({ length: K }, (_, i) => (i % 2 === 0 ? [c.owner, 'model-a'] : [c.helper, 'model-b'])),
          ),
        );
        // Calibration for the lower bound: the helper's own rate under a backlog.
        helperAlone.push(
          await burst(
            c,
            agent,
            Array.from({ length: K / 2 }, () => [c.helper, 'model-b']),
          ),
        );
      }
      o.log('lending-makespan: owner alone, naive stealing and helper calibration done');

      await c.link('a', 'b');
      await sleep(500);
      const lending: Burst[] = [];
      for (let r = 0; r < reps; r++)
        lending.push(
          await burst(
            c,
            agent,
            Array.from({ length: K }, () => [c.owner, 'model-a']),
          ),
        );
      o.log('lending-makespan: lending done');

      // Per-job times under a backlog (makespan / jobs): what each engine sustains, the router's per-request
      // latency overlapped with the previous job as in any burst.
      const aloneMs = median(alone.map((b) => b.makespanMs))!;
      const jobOwner = aloneMs / K;
      const jobHelper = median(helperAlone.map((b) => b.makespanMs))! / (K / 2);
      const lowerBound = K / (1 / jobOwner + 1 / jobHelper);
      const row = (label: string, bursts: Burst[]): Cell[] => {
        const ms = median(bursts.map((b) => b.makespanMs))!;
        return [
          label,
          bursts.length,
          formatNumber(ms, 0),
          formatNumber(Math.min(...bursts.map((b) => b.makespanMs)), 0),
          formatNumber(median(bursts.map((b) => b.onOwner)), 0),
          formatNumber(median(bursts.map((b) => b.onHelper)), 0),
          formatRatio(ratio(ms, lowerBound)),
          formatRatio(ratio(aloneMs, ms)),
        ];
      };
      const lendMs = median(lending.map((b) => b.makespanMs))!;
      return {
        tables: [
          {
            title: `lending-makespan: burst of ${K} chat requests (max_tokens ${MAX_TOKENS}) to the owner; per job under a backlog: owner ${formatNumber(jobOwner, 1)} ms, helper ${formatNumber(jobHelper, 1)} ms (one at a time: ${formatNumber(tOwner, 1)} ms, ${formatNumber(tHelper, 1)} ms)`,
            columns: [
              'scenario',
              'bursts',
              'makespan ms (median)',
              'best ms',
              'on owner',
              'on helper',
              '÷ lower bound',
              'speed-up vs owner alone',
            ],
            rows: [
              row('owner alone (no link)', alone),
              row('naive stealing (client round-robin)', naive),
              row('lending (link owner → helper)', lending),
              [
                'lower bound K / (1/t_owner + 1/t_helper)',
                null,
                formatNumber(lowerBound, 0),
                null,
                null,
                null,
                formatRatio(1),
                formatRatio(ratio(aloneMs, lowerBound)),
              ],
            ],
            notes: [
              '"on owner"/"on helper" count requests each engine received during a burst (median over bursts);',
              'lower bound: total work / combined rate, from per-job times under a backlog (owner: owner-alone makespan / K;',
              `helper: a calibration burst of ${K / 2} to the helper's own model, makespan / ${K / 2}); 1.00× is the best possible.`,
              'Order: owner alone, naive, helper calibration (alternating per repetition), then the link is created and the lending bursts run.',
            ],
          },
        ],
        summary: [
          {
            benchmark: 'lending-makespan',
            measure: `makespan of ${K} with lending, ms`,
            value: formatNumber(lendMs, 0),
            ratio: ratio(lendMs, lowerBound),
            against: 'makespan lower bound',
          },
          {
            benchmark: 'lending-makespan',
            measure: 'owner alone, ms',
            value: formatNumber(aloneMs, 0),
            ratio: ratio(aloneMs, lowerBound),
            against: 'makespan lower bound',
          },
        ],
      };
    } finally {
      agent.destroy();
      await scope.close();
    }
  },
};

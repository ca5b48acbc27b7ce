/**
 * proxy-overhead: what the router adds to a request. One sim engine (zero token and load time) is called directly,
 * and a real router node is called for (a) a static route to that same engine and (b) a sim model it supervises
 * itself (same engine flags): sequential, concurrent and streamed chat completions with max_tokens 1, after a
 * warm-up. Rounds alternate the targets so drift on a noisy machine hits all of them alike.
 */
import type { Agent } from 'node:http';
import { chat, keepAliveAgent, type CallResult } from './http-client';
import { BenchScope, until } from './scope';
import { formatNumber, formatRatio, percentile, ratio, type Cell } from './table';
import type { Benchmark, BenchOptions, BenchResult } from './types';

const CONCURRENCY = 8;
/** What the baseline row shows in the difference column. */
const DASH_BASE = 'baseline';

interface Target {
  label: string;
  url: string;
  model: string;
}

type Mode = 'sequential' | 'concurrent' | 'streamed';

interface Sample {
  latencies: number[];
  firstBytes: number[];
  requests: number;
  elapsedMs: number;
}

const empty = (): Sample => ({ latencies: [], firstBytes: [], requests: 0, elapsedMs: 0 });

async function runChunk(t: Target, mode: Mode, count: number, agent: Agent, into: Sample): Promise<void> {
  const record = (r: CallResult) => {
    into.latencies.push(r.totalMs);
    into.firstBytes.push(r.firstByteMs);
  };
  const t0 = performance.now();
  if (mode === 'concurrent') {
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        next++;
        record(await chat(t.url, t.model, agent, 1));
      }
    }));
  } else {
    for (let i = 0; i < count; i++) record(await chat(t.url, t.model, agent, 1, mode === 'streamed'));
  }
  into.elapsedMs += performance.now() - t0;
  into.requests += count;
}

export const proxyOverhead: Benchmark = {
  name: 'proxy-overhead',
  about: 'chat completions to a sim engine directly vs through a router node (static route, supervised sim model)',
  async run(o: BenchOptions): Promise<BenchResult> {
    const counts: Record<Mode, number> = o.quick
      ? { sequential: 150, concurrent: 400, streamed: 100 }
      : { sequential: 800, concurrent: 2400, streamed: 400 };
    const rounds = o.quick ? 2 : 4;
    const warmup = o.quick ? 30 : 80;
    const scope = new BenchScope();
    const agent = keepAliveAgent(CONCURRENCY * 2);
    try {
      const engineFlags = ['--shape', 'llama-server', '--token-time', '0', '--load-time', '0', '--parallel', String(CONCURRENCY)];
      const direct = await scope.startSim([...engineFlags, '--alias', 'bench-direct']);
      const node = await scope.startNode(
        { 'bench-sim': { name: 'bench-sim', backend: 'sim', capabilities: ['text'], parallel: CONCURRENCY, sim: { load_time: '0ms', token_time: '0ms' } } },
        { routing: { static_routes: { 'bench-static': { endpoints: [direct.url] } } } },
      );
      o.log(`proxy-overhead: engine ${direct.url}, router ${node.url}`);
      const targets: Target[] = [
        { label: 'direct (sim engine)', url: direct.url, model: 'bench-direct' },
        { label: 'router → static route', url: node.url, model: 'bench-static' },
        { label: 'router → sim model', url: node.url, model: 'bench-sim' },
      ];
      // The supervised model loads lazily: the first request starts its engine.
      await until(async () => (await chat(node.url, 'bench-sim', agent, 1)).status === 200, 'the router\'s sim model to answer', 30_000, 100);
      for (const t of targets) for (let i = 0; i < warmup; i++) await chat(t.url, t.model, agent, 1, i % 2 === 1);

      const modes: Mode[] = ['sequential', 'concurrent', 'streamed'];
      const results = new Map<string, Sample>();
      const key = (t: Target, m: Mode) => `${t.label}|${m}`;
      for (const mode of modes) {
        for (let r = 0; r < rounds; r++) {
          const order = targets.map((_, i) => targets[(i + r) % targets.length]);
          const chunk = Math.ceil(counts[mode] / rounds);
          for (const t of order) {
            if (!results.has(key(t, mode))) results.set(key(t, mode), empty());
            await runChunk(t, mode, chunk, agent, results.get(key(t, mode))!);
          }
        }
        o.log(`proxy-overhead: ${mode} done`);
      }

      const rows: Cell[][] = [];
      const stat = (s: Sample) => ({
        p50: percentile(s.latencies, 50), p95: percentile(s.latencies, 95), fb: percentile(s.firstBytes, 50),
        rps: s.requests / (s.elapsedMs / 1000),
      });
      const summary: BenchResult['summary'] = [];
      for (const mode of modes) {
        const base = stat(results.get(key(targets[0], mode))!);
        for (const t of targets) {
          const s = results.get(key(t, mode))!;
          const x = stat(s);
          const isBase = t === targets[0];
          rows.push([
            t.label, mode === 'concurrent' ? `concurrent ×${CONCURRENCY}` : mode, s.requests,
            formatNumber(x.p50, 3), formatNumber(x.p95, 3), formatNumber(x.fb, 3), formatNumber(x.rps, 0),
            isBase ? DASH_BASE : formatNumber((x.p50 ?? 0) - (base.p50 ?? 0), 3),
            formatRatio(ratio(x.p50, base.p50)), formatRatio(ratio(x.rps, base.rps)),
          ]);
          if (t === targets[2] && mode !== 'streamed') {
            summary.push(mode === 'sequential'
              ? { benchmark: 'proxy-overhead', measure: 'sequential p50, router → sim model', value: `${formatNumber(x.p50, 3)} ms`, ratio: ratio(x.p50, base.p50), against: 'direct p50' }
              : { benchmark: 'proxy-overhead', measure: `concurrent ×${CONCURRENCY} req/s, router → sim model`, value: formatNumber(x.rps, 0), ratio: ratio(x.rps, base.rps), against: 'direct req/s' });
          }
        }
      }
      return {
        tables: [{
          title: `proxy-overhead: chat completions (max_tokens 1) to a sim engine with zero token and load time, ${rounds} alternating rounds`,
          columns: ['path', 'mode', 'requests', 'p50 ms', 'p95 ms', 'first byte p50 ms', 'req/s', '+p50 ms vs direct', 'p50 ÷ direct', 'req/s ÷ direct'],
          rows,
          notes: [
            'ratios divide each row by the direct row of the same mode (measured in the same run);',
            'p50 ÷ direct above 1 is added latency, req/s ÷ direct below 1 is lost throughput.',
            'The client, the router node and the engines share the machine\'s cores: concurrent numbers include that contention.',
          ],
        }],
        summary,
      };
    } finally {
      agent.destroy();
      await scope.close();
    }
  },
};

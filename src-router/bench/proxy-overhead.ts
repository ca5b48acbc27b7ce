/**
 * proxy-overhead: what the router adds to a request, beside nginx `proxy_pass` to the same upstream. One
 * sim engine (zero token and load time) is called directly, through nginx, and through a real router node — a static
 * route to that same engine, and a sim model the node supervises itself (same engine flags; its local ID is not its
 * public one, so every answer is rewritten) — sequentially, 16 at a time and streamed, after a warm-up; rounds
 * alternate the targets so drift on a noisy machine hits all alike. The router's CPU per request comes from its
 * process's CPU time (`/proc/<pid>/stat`). Two more rows compare an enrolled model (in a link, through the router
 * queue) with a plain one on the same node, and a long stream measures the router's CPU per relayed SSE chunk with
 * the model ID rewritten, beside a bare Node proxy piping the same stream. Last, the request path under a C load generator:
 * wrk to a reference upstream (`proxy-wrk.ts`).
 */
import type { Agent } from 'node:http';
import { type CallResult, chat, keepAliveAgent } from './http-client';
import { Trio } from './lending-trio';
import { startNginx } from './nginx';
import { cpuTicks, TICKS_PER_S } from './process-cpu';
import {
  measureWithWrk,
  REFERENCE_ANSWER,
  REFERENCE_EMBEDDING,
  REFERENCE_EMBEDDING_MODEL,
  REFERENCE_MODEL,
  REFERENCE_STREAM,
  REFERENCE_STREAM_MODEL,
} from './proxy-wrk';
import { BenchScope, until } from './scope';
import { type Cell, formatNumber, formatRatio, percentile, ratio } from './table';
import type { Benchmark, BenchOptions, BenchResult } from './types';

const CONCURRENCY = 16;
const LONG_STREAM_TOKENS = 2_000;

interface Target {
  label: string;
  url: string;
  model: string;
  /** The proxy process whose CPU is counted, the router's or the bare Node proxy's (absent: nothing counted). */
  pid?: number;
}

type Mode = 'sequential' | 'concurrent' | 'streamed';

interface Sample {
  latencies: number[];
  firstBytes: number[];
  requests: number;
  elapsedMs: number;
  cpuTicks: number;
}

const empty = (): Sample => ({ latencies: [], firstBytes: [], requests: 0, elapsedMs: 0, cpuTicks: 0 });

async function runChunk(
  t: Target,
  mode: Mode,
  count: number,
  agent: Agent,
  into: Sample,
  maxTokens = 1,
): Promise<void> {
  const record = (r: CallResult) => {
    into.latencies.push(r.totalMs);
    into.firstBytes.push(r.firstByteMs);
  };
  const ticks0 = cpuTicks(t.pid);
  const t0 = performance.now();
  if (mode === 'concurrent') {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < count) {
          next++;
          record(await chat(t.url, t.model, agent, maxTokens));
        }
      }),
    );
  } else {
    for (let i = 0; i < count; i++) record(await chat(t.url, t.model, agent, maxTokens, mode === 'streamed'));
  }
  into.elapsedMs += performance.now() - t0;
  into.cpuTicks += cpuTicks(t.pid) - ticks0;
  into.requests += count;
}

/** `count` requests, `concurrency` at a time (`streamed`: every other one streamed), not measured: the path warmed up. */
async function warm(
  t: Target,
  count: number,
  agent: Agent,
  o: { concurrency: number; streamed: boolean },
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < count) {
        const i = next++;
        await chat(t.url, t.model, agent, 1, o.streamed && i % 2 === 1);
      }
    }),
  );
}

/** The proxy's CPU per request in µs (null for rows that count none). */
const cpuPerRequestUs = (t: Target, s: Sample) =>
  t.pid === undefined || !s.requests ? null : (s.cpuTicks / TICKS_PER_S / s.requests) * 1e6;

const SIM_FLAGS = [
  '--shape',
  'llama-server',
  '--token-time',
  '0',
  '--load-time',
  '0',
  '--parallel',
  String(CONCURRENCY),
];
const simModel = (name: string, parallel = CONCURRENCY) => ({
  name,
  backend: 'sim' as const,
  capabilities: ['text' as const],
  parallel,
  contextsize: 4096,
  sim: { load_time: '0ms', token_time: '0ms' },
});

export const proxyOverhead: Benchmark = {
  name: 'proxy-overhead',
  about:
    'chat completions to a sim engine directly, through nginx, and through a router node (static route, supervised sim model, enrolled model)',
  async run(o: BenchOptions): Promise<BenchResult> {
    const counts: Record<Mode, number> = o.quick
      ? { sequential: 300, concurrent: 1600, streamed: 200 }
      : { sequential: 1600, concurrent: 8000, streamed: 800 };
    const rounds = o.quick ? 2 : 4;
    const warmup = o.quick ? 3_000 : 8_000;
    const scope = new BenchScope();
    const agent = keepAliveAgent(CONCURRENCY * 2);
    try {
      const direct = await scope.startSim([...SIM_FLAGS, '--alias', 'bench-direct']);
      const nginx = await startNginx(scope, direct.url);
      // The sim model's config file (its local ID, which its engine answers with) is not its public name: every answer
      // and every chunk has its model ID rewritten, as a suffixed or lent model's are.
      // The wrk measure: a reference upstream that answers at once, nginx in front of it (wrk, proxy-wrk.ts).
      const reference = await startNginx(scope, { answer: REFERENCE_ANSWER });
      const referenceProxy = await startNginx(scope, reference.url);
      const referenceStream = await startNginx(scope, { answer: REFERENCE_STREAM, type: 'text/event-stream' });
      const referenceStreamProxy = await startNginx(scope, referenceStream.url);
      const referenceEmbedding = await startNginx(scope, { answer: REFERENCE_EMBEDDING });
      const referenceEmbeddingProxy = await startNginx(scope, referenceEmbedding.url);
      // What Node itself reaches as a proxy here (the yardstick): a bare fastify route with undici.
      const bare = await scope.startCli(['bare-proxy', '--upstream', reference.url]);
      // And in front of the sim engine: what piping a stream costs Node per chunk here, beside the router's relay.
      const bareSim = await scope.startCli(['bare-proxy', '--upstream', direct.url]);
      const node = await scope.startNode(
        { 'bench-sim-local': simModel('bench-sim') },
        {
          routing: {
            static_routes: {
              'bench-direct': { endpoints: [direct.url] },
              [REFERENCE_MODEL]: { endpoints: [reference.url] },
              [REFERENCE_STREAM_MODEL]: { endpoints: [referenceStream.url] },
              [REFERENCE_EMBEDDING_MODEL]: { endpoints: [referenceEmbedding.url] },
            },
          },
        },
      );
      o.log(`proxy-overhead: engine ${direct.url}, nginx ${nginx.url}, router ${node.url}`);
      const targets: Target[] = [
        { label: 'direct (sim engine)', url: direct.url, model: 'bench-direct' },
        { label: 'nginx proxy_pass', url: nginx.url, model: 'bench-direct' },
        { label: 'router → static route', url: node.url, model: 'bench-direct', pid: node.proc.pid },
        { label: 'router → sim model', url: node.url, model: 'bench-sim', pid: node.proc.pid },
      ];
      // The supervised model loads lazily: the first request starts its engine.
      await until(
        async () => (await chat(node.url, 'bench-sim', agent, 1)).status === 200,
        "the router's sim model to answer",
        30_000,
        100,
      );
      // Warm-up, not measured: V8 keeps optimising (and deoptimising) the request path for thousands of requests; a
      // node measured after a few dozen spent half its CPU compiling (1.7 ms per request one at a time, ~0.3 ms warm).
      const barePipe: Target = {
        label: 'bare fastify + undici (piped)',
        url: bareSim.url,
        model: 'bench-direct',
        pid: bareSim.proc.pid,
      };
      for (const t of [...targets, barePipe])
        await warm(t, warmup, agent, { concurrency: CONCURRENCY, streamed: true });

      const modes: Mode[] = ['sequential', 'concurrent', 'streamed'];
      const results = new Map<string, Sample>();
      const key = (t: Target, m: Mode) => `${t.label}|${m}`;
      for (const mode of modes) {
        for (let r = 0; r < rounds; r++) {
          const order = targets.map((_, i) => targets[(i + r) % targets.length]);
          for (const t of order) {
            if (!results.has(key(t, mode))) results.set(key(t, mode), empty());
            await runChunk(t, mode, Math.ceil(counts[mode] / rounds), agent, results.get(key(t, mode))!);
          }
        }
        o.log(`proxy-overhead: ${mode} done`);
      }

      // A long stream: the router's CPU per relayed chunk (each one's model ID rewritten), and chunks per second.
      const longStreams = o.quick ? 6 : 20;
      const streamTargets = [targets[0], barePipe, targets[3]];
      const long = new Map<string, Sample>();
      // Warm-up, not measured: the first long streams compile the relay's per-chunk path on V8's background threads,
      // whose CPU the node's process time counts (~2× the steady per-chunk cost here).
      for (const t of streamTargets) await runChunk(t, 'streamed', 2, agent, empty(), LONG_STREAM_TOKENS);
      for (let r = 0; r < 2; r++)
        for (const t of streamTargets) {
          if (!long.has(t.label)) long.set(t.label, empty());
          await runChunk(t, 'streamed', longStreams / 2, agent, long.get(t.label)!, LONG_STREAM_TOKENS);
        }

      const wrk = await measureWithWrk(scope, o, {
        direct: { label: 'direct (reference upstream)', url: reference.url },
        nginx: { label: 'nginx proxy_pass', url: referenceProxy.url },
        bare: { label: 'bare fastify + undici', url: bare.url, pid: bare.proc.pid },
        routers: [{ label: 'router → static route', url: node.url, pid: node.proc.pid }],
        streamed: {
          direct: { label: 'direct (reference upstream)', url: referenceStream.url },
          nginx: { label: 'nginx proxy_pass', url: referenceStreamProxy.url },
          routers: [{ label: 'router → static route', url: node.url, pid: node.proc.pid }],
        },
        embedding: {
          direct: { label: 'direct (reference upstream)', url: referenceEmbedding.url },
          nginx: { label: 'nginx proxy_pass', url: referenceEmbeddingProxy.url },
          routers: [{ label: 'router → static route', url: node.url, pid: node.proc.pid }],
        },
      });

      // Enrolled vs plain on one node: the router queue's cost (one request at a time: nothing waits, nothing is lent;
      // an LLM link needs models that serve one request at a time).
      const trio = await Trio.start(scope, {
        owner: { plain: simModel('bench-plain', 1), enrolled: simModel('bench-enrolled', 1) },
        helper: { help: simModel('bench-help', 1) },
      });
      await trio.link('enrolled', 'help');
      const queueTargets: Target[] = [
        { label: 'owner node → plain model', url: trio.owner.url, model: 'bench-plain', pid: trio.owner.proc.pid },
        {
          label: 'owner node → enrolled model',
          url: trio.owner.url,
          model: 'bench-enrolled',
          pid: trio.owner.proc.pid,
        },
      ];
      for (const t of queueTargets) await warm(t, warmup, agent, { concurrency: 1, streamed: false });
      const queued = new Map<string, Sample>();
      // Short alternating rounds: the difference sought is a fraction of a millisecond, and this machine's phases move
      // every path by more than that within seconds (two long rounds gave −0.07 to +0.79 ms for the same code).
      const queueRounds = o.quick ? 10 : 20;
      for (let r = 0; r < queueRounds; r++)
        for (const t of r % 2 ? [...queueTargets].reverse() : queueTargets) {
          if (!queued.has(t.label)) queued.set(t.label, empty());
          await runChunk(t, 'sequential', Math.ceil(counts.sequential / queueRounds), agent, queued.get(t.label)!);
        }

      const stat = (s: Sample) => ({
        p50: percentile(s.latencies, 50),
        p95: percentile(s.latencies, 95),
        fb: percentile(s.firstBytes, 50),
        rps: s.requests / (s.elapsedMs / 1000),
      });
      const rows: Cell[][] = [];
      const summary: BenchResult['summary'] = [];
      for (const mode of modes) {
        const base = stat(results.get(key(targets[0], mode))!);
        const ngx = stat(results.get(key(targets[1], mode))!);
        for (const t of targets) {
          const s = results.get(key(t, mode))!;
          const x = stat(s);
          const cpu = cpuPerRequestUs(t, s);
          rows.push([
            t.label,
            mode === 'concurrent' ? `concurrent ×${CONCURRENCY}` : mode,
            s.requests,
            formatNumber(x.p50, 3),
            formatNumber(x.p95, 3),
            formatNumber(x.fb, 3),
            formatNumber(x.rps, 0),
            t === targets[0] ? 'baseline' : formatNumber((x.p50 ?? 0) - (base.p50 ?? 0), 3),
            formatRatio(ratio(x.rps, base.rps)),
            t === targets[1] ? 'nginx' : formatRatio(ratio(x.rps, ngx.rps)),
            cpu === null ? '—' : formatNumber(cpu, 0),
          ]);
          if (!t.pid) continue;
          if (mode === 'concurrent')
            summary.push({
              benchmark: 'proxy-overhead',
              measure: `${t.label}, req/s ×${CONCURRENCY}`,
              value: formatNumber(x.rps, 0),
              ratio: ratio(x.rps, ngx.rps),
              against: 'nginx req/s',
            });
          if (mode === 'sequential')
            summary.push({
              benchmark: 'proxy-overhead',
              measure: `${t.label}, added p50 one at a time`,
              value: `${formatNumber((x.p50 ?? 0) - (base.p50 ?? 0), 3)} ms`,
              ratio: ratio(x.p50, base.p50),
              against: 'direct p50',
            });
          if (mode === 'concurrent' && cpu !== null)
            summary.push({
              benchmark: 'proxy-overhead',
              measure: `${t.label}, router CPU per request`,
              value: `${formatNumber(cpu, 0)} µs`,
              ratio: null,
              against: '—',
            });
        }
      }
      const streamRows: Cell[][] = [];
      const longBase = long.get(streamTargets[0].label)!;
      const perChunkUs = (t: Target) =>
        t.pid === undefined
          ? null
          : (long.get(t.label)!.cpuTicks / TICKS_PER_S / (long.get(t.label)!.requests * LONG_STREAM_TOKENS)) * 1e6;
      const barePerChunk = perChunkUs(barePipe);
      for (const t of streamTargets) {
        const s = long.get(t.label)!;
        const chunks = s.requests * LONG_STREAM_TOKENS;
        const perChunk = perChunkUs(t);
        const overBare = t === barePipe ? 'bare' : perChunk === null ? '—' : formatRatio(ratio(perChunk, barePerChunk));
        streamRows.push([
          t.label,
          s.requests,
          chunks,
          formatNumber(chunks / (s.elapsedMs / 1000), 0),
          formatRatio(ratio(chunks / s.elapsedMs, (longBase.requests * LONG_STREAM_TOKENS) / longBase.elapsedMs)),
          perChunk === null ? '—' : formatNumber(perChunk, 2),
          overBare,
        ]);
        if (perChunk === null) continue;
        if (t === barePipe)
          summary.push({
            benchmark: 'proxy-overhead',
            measure: "bare fastify + undici (Node's own floor), CPU per piped SSE chunk",
            value: `${formatNumber(perChunk, 2)} µs`,
            ratio: null,
            against: '—',
          });
        else
          summary.push({
            benchmark: 'proxy-overhead',
            measure: 'router CPU per relayed SSE chunk (ID rewritten)',
            value: `${formatNumber(perChunk, 2)} µs`,
            ratio: ratio(perChunk, barePerChunk),
            against: "bare Node's CPU per piped chunk",
          });
      }
      const queueRows: Cell[][] = [];
      const plain = stat(queued.get(queueTargets[0].label)!);
      for (const t of queueTargets) {
        const s = queued.get(t.label)!;
        const x = stat(s);
        queueRows.push([
          t.label,
          s.requests,
          formatNumber(x.p50, 3),
          formatNumber(x.p95, 3),
          t === queueTargets[0] ? 'baseline' : formatNumber((x.p50 ?? 0) - (plain.p50 ?? 0), 3),
          formatNumber(cpuPerRequestUs(t, s), 0),
        ]);
        if (t === queueTargets[1])
          summary.push({
            benchmark: 'proxy-overhead',
            measure: 'enrolled model, added p50 over a plain one',
            value: `${formatNumber((x.p50 ?? 0) - (plain.p50 ?? 0), 3)} ms`,
            ratio: ratio(x.p50, plain.p50),
            against: 'plain model p50',
          });
      }
      return {
        tables: [
          {
            title: `proxy-overhead: chat completions (max_tokens 1) to a sim engine with zero token and load time, ${rounds} alternating rounds`,
            columns: [
              'path',
              'mode',
              'requests',
              'p50 ms',
              'p95 ms',
              'first byte p50 ms',
              'req/s',
              '+p50 ms vs direct',
              'req/s ÷ direct',
              'req/s ÷ nginx',
              'router CPU µs/req',
            ],
            rows,
            notes: [
              'ratios divide each row by the direct or the nginx row of the same mode (measured in the same run);',
              "router CPU is the node process's user + system time over the requests of that row (clock-tick resolution);",
              "the client, nginx, the router node and the engines share the machine's cores: concurrent numbers include that contention.",
            ],
          },
          {
            title: `proxy-overhead: one stream of ${LONG_STREAM_TOKENS} chunks at a time, direct, piped by a bare Node proxy, and through the router (each chunk's model ID rewritten)`,
            columns: ['path', 'streams', 'chunks', 'chunks/s', 'chunks/s ÷ direct', 'CPU µs/chunk', 'CPU ÷ bare Node'],
            rows: streamRows,
            notes: [
              "CPU is the proxy process's own (router or bare); the bare proxy pipes the engine's stream as it arrives (no parsing,",
              'no rewriting): what relaying a chunk costs Node itself on this machine.',
            ],
          },
          {
            title:
              'proxy-overhead: an enrolled model (in a link: through the router queue) vs a plain one on the same node, one request at a time',
            columns: ['path', 'requests', 'p50 ms', 'p95 ms', '+p50 ms vs plain', 'router CPU µs/req'],
            rows: queueRows,
          },
          wrk.table,
        ],
        summary: [...summary, ...wrk.summary],
      };
    } finally {
      agent.destroy();
      await scope.close();
    }
  },
};

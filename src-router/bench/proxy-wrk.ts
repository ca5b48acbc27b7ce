/**
 * proxy-overhead's wrk part: wrk, one thread, against a reference upstream
 * that answers at once (nginx returning a fixed chat completion), nginx `proxy_pass` to it, and the router's static
 * route to it; one connection at a time (p50: what each path adds) and 16 at once (req/s), rounds alternating the
 * paths. Streamed, a second reference answers a whole short SSE stream at once: one at a time, its p50 is what each
 * path adds to the whole stream, an upper bound of what it adds to the first byte (which comes in the same write).
 * The router's CPU per request comes from its process's CPU time.
 */
import { cpuTicks, TICKS_PER_S } from './process-cpu';
import type { BenchScope } from './scope';
import { type Cell, formatNumber, formatRatio, median, ratio, type Table } from './table';
import type { BenchOptions, SummaryLine } from './types';
import { runWrk, wrkBinary, wrkScript } from './wrk';

/** What the reference upstream answers to every request: a chat completion naming the static route's public ID. */
export const REFERENCE_MODEL = 'bench-ref';
export const REFERENCE_ANSWER = JSON.stringify({
  id: 'chatcmpl-ref',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: REFERENCE_MODEL,
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello there' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
});

/** The streamed reference: a short SSE stream (a token, the finish with usage, [DONE]) as one body, for `stream: true`. */
export const REFERENCE_STREAM_MODEL = 'bench-ref-stream';
const sseChunk = (delta: Record<string, string>, finish: string | null, usage?: Record<string, number>) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-ref',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: REFERENCE_STREAM_MODEL,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  })}\n\n`;
export const REFERENCE_STREAM = `${sseChunk({ role: 'assistant', content: 'hello' }, null)}${sseChunk({}, 'stop', { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 })}data: [DONE]\n\n`;

/**
 * The embedding reference ("embedding and short-completion traffic arrives by the thousand"): an answer of
 * 1,536 numbers, as an embedding model of that width gives, after which its model and usage come (~19 KB).
 */
export const REFERENCE_EMBEDDING_MODEL = 'bench-ref-embedding';
export const REFERENCE_EMBEDDING = JSON.stringify({
  object: 'list',
  data: [
    {
      object: 'embedding',
      index: 0,
      embedding: Array.from({ length: 1_536 }, (_, i) => Number(Math.sin(i + 1).toFixed(9))),
    },
  ],
  model: REFERENCE_EMBEDDING_MODEL,
  usage: { prompt_tokens: 2, total_tokens: 2 },
});

export interface WrkPath {
  label: string;
  url: string;
  /** The router process whose CPU is counted. */
  pid?: number;
}

/** One way of calling the paths: connections at once, non-streamed or streamed. */
interface Mode {
  label: string;
  connections: number;
  script: string;
  /** The API path every request goes to. */
  path: string;
  paths: WrkPath[];
  direct: WrkPath;
  nginx: WrkPath;
  bare?: WrkPath;
}

interface Acc {
  p50s: number[];
  requests: number;
  seconds: number;
  ticks: number;
}

/**
 * The reference upstream called directly, nginx in front of it, a bare Node proxy in front of it (what Node reaches
 * without routing), and the router's paths to it.
 */
export async function measureWithWrk(
  scope: BenchScope,
  o: BenchOptions,
  at: {
    direct: WrkPath;
    nginx: WrkPath;
    bare: WrkPath;
    routers: WrkPath[];
    /** The streamed reference called directly, through nginx and through the routers (one connection at a time). */
    streamed: { direct: WrkPath; nginx: WrkPath; routers: WrkPath[] };
    /** The embedding reference called directly, through nginx and through the routers (16 at once). */
    embedding: { direct: WrkPath; nginx: WrkPath; routers: WrkPath[] };
  },
): Promise<{ table: Table; summary: SummaryLine[] }> {
  const bin = wrkBinary();
  const plain = wrkScript(scope, {
    model: REFERENCE_MODEL,
    messages: [{ role: 'user', content: 'hello' }],
    max_tokens: 8,
  });
  const streamed = wrkScript(scope, {
    model: REFERENCE_STREAM_MODEL,
    messages: [{ role: 'user', content: 'hello' }],
    max_tokens: 8,
    stream: true,
  });
  const paths = [at.direct, at.nginx, at.bare, ...at.routers];
  const embedding = wrkScript(scope, { model: REFERENCE_EMBEDDING_MODEL, input: 'hello' });
  const streamPaths = [at.streamed.direct, at.streamed.nginx, ...at.streamed.routers];
  const embeddingPaths = [at.embedding.direct, at.embedding.nginx, ...at.embedding.routers];
  const chat = '/v1/chat/completions';
  const modes: Mode[] = [
    ...[1, 16].map((c) => ({
      label: String(c),
      connections: c,
      script: plain,
      path: chat,
      paths,
      direct: at.direct,
      nginx: at.nginx,
      bare: at.bare,
    })),
    {
      label: '1, streamed',
      connections: 1,
      script: streamed,
      path: chat,
      paths: streamPaths,
      direct: at.streamed.direct,
      nginx: at.streamed.nginx,
    },
    {
      label: '16, embedding',
      connections: 16,
      script: embedding,
      path: '/v1/embeddings',
      paths: embeddingPaths,
      direct: at.embedding.direct,
      nginx: at.embedding.nginx,
    },
  ];
  // Short alternating rounds: this machine's phases move every path by up to 2× within seconds.
  const rounds = o.quick ? 4 : 8;
  const seconds = o.quick ? 1 : 2;
  const acc = new Map<string, Acc>();
  const key = (p: WrkPath, m: Mode) => `${p.label}|${m.label}`;
  // Warm-up: connections open, the router's paths compiled.
  for (const m of modes.slice(1))
    for (const p of m.paths) await runWrk(bin, m.script, `${p.url}${m.path}`, { connections: 16, seconds: 1 });
  for (const m of modes) {
    for (let r = 0; r < rounds; r++) {
      for (const p of m.paths.map((_, i) => m.paths[(i + r) % m.paths.length])) {
        const a = acc.get(key(p, m)) ?? { p50s: [], requests: 0, seconds: 0, ticks: 0 };
        acc.set(key(p, m), a);
        const t0 = cpuTicks(p.pid);
        const run = await runWrk(bin, m.script, `${p.url}${m.path}`, { connections: m.connections, seconds });
        a.ticks += cpuTicks(p.pid) - t0;
        a.requests += run.requests;
        a.seconds += run.requests / run.rps;
        if (run.p50Ms !== null) a.p50s.push(run.p50Ms);
      }
    }
    o.log(`proxy-overhead: wrk ×${m.label} done`);
  }
  const rows: Cell[][] = [];
  const summary: SummaryLine[] = [];
  const view = (p: WrkPath, m: Mode) => {
    const a = acc.get(key(p, m))!;
    return {
      p50: median(a.p50s),
      rps: a.requests / a.seconds,
      cpu: p.pid === undefined ? null : (a.ticks / TICKS_PER_S / a.requests) * 1e6,
    };
  };
  for (const m of modes) {
    const direct = view(m.direct, m);
    const nginx = view(m.nginx, m);
    const bare = m.bare ? view(m.bare, m) : null;
    for (const p of m.paths) {
      const x = view(p, m);
      const added = x.p50 === null || direct.p50 === null ? null : x.p50 - direct.p50;
      rows.push([
        p.label,
        m.label,
        formatNumber(x.p50, 3),
        p === m.direct ? 'baseline' : formatNumber(added, 3),
        formatNumber(x.rps, 0),
        p === m.nginx ? 'nginx' : formatRatio(ratio(x.rps, nginx.rps)),
        p === m.bare ? 'bare' : !bare || p === m.direct || p === m.nginx ? '—' : formatRatio(ratio(x.rps, bare.rps)),
        x.cpu === null ? '—' : formatNumber(x.cpu, 0),
      ]);
      if (p.pid === undefined) continue;
      if (p === m.bare) {
        if (m.connections > 1)
          summary.push({
            benchmark: 'proxy-overhead',
            measure: `${p.label} (Node's own ceiling), req/s ×${m.connections} (wrk)`,
            value: formatNumber(x.rps, 0),
            ratio: ratio(x.rps, nginx.rps),
            against: 'nginx req/s (wrk)',
          });
        continue;
      }
      if (m.connections === 1) {
        const what =
          m.script === streamed
            ? 'added p50 of a whole short stream (bounds its first byte), one at a time'
            : 'added p50 one at a time';
        summary.push({
          benchmark: 'proxy-overhead',
          measure: `${p.label}, ${what} (wrk)`,
          value: `${formatNumber(added, 3)} ms`,
          ratio: ratio(x.p50, direct.p50),
          against: 'direct p50 (wrk)',
        });
      } else if (m.script === embedding) {
        summary.push({
          benchmark: 'proxy-overhead',
          measure: `${p.label}, an embedding's answer (1,536 numbers), req/s ×${m.connections} (wrk)`,
          value: formatNumber(x.rps, 0),
          ratio: ratio(x.rps, nginx.rps),
          against: 'nginx req/s (wrk)',
        });
        summary.push({
          benchmark: 'proxy-overhead',
          measure: `${p.label}, an embedding's answer, router CPU per request (wrk)`,
          value: `${formatNumber(x.cpu, 0)} µs`,
          ratio: null,
          against: '—',
        });
      } else {
        summary.push({
          benchmark: 'proxy-overhead',
          measure: `${p.label}, req/s ×${m.connections} (wrk)`,
          value: formatNumber(x.rps, 0),
          ratio: ratio(x.rps, nginx.rps),
          against: 'nginx req/s (wrk)',
        });
        if (bare)
          summary.push({
            benchmark: 'proxy-overhead',
            measure: `${p.label}, req/s ×${m.connections} over the bare Node proxy (wrk)`,
            value: formatNumber(x.rps, 0),
            ratio: ratio(x.rps, bare.rps),
            against: 'bare fastify + undici req/s (wrk)',
          });
      }
    }
  }
  return {
    table: {
      title: `proxy-overhead with wrk (one thread) to a reference upstream that answers at once, ${rounds} alternating rounds of ${seconds} s`,
      columns: [
        'path',
        'connections',
        'p50 ms',
        '+p50 ms vs direct',
        'req/s',
        'req/s ÷ nginx',
        'req/s ÷ bare Node',
        'CPU µs/req',
      ],
      rows,
      notes: [
        "the reference upstream is nginx returning a fixed chat completion; p50 is the median of the rounds' wrk p50s;",
        '"streamed": a second reference answers `stream: true` with a whole short SSE stream (a token, the finish, [DONE]) in',
        'one body; the router relays it as a stream (chunked, in one write), so its p50 bounds what the path adds to a first byte;',
        '"embedding": a third reference answers an embedding of 1,536 numbers (~19 KB), its model and usage after them;',
        '"bare fastify + undici" is a fastify route that parses the body and forwards it with an undici Pool (no routing, no',
        "metrics, no rewriting): what Node itself reaches as a proxy here; CPU is the proxy process's own (router or bare);",
        'with a C client and a C upstream, one connection at a time shows what the path itself adds: the Node client and sim engine',
        'of the table above add their own wake-ups on this machine to every hop.',
      ],
    },
    summary,
  };
}

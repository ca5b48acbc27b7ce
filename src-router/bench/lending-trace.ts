/**
 * The lending trace (part of lending-scenarios): recorded-looking traffic on four nodes (`trace-traffic.ts`) replayed
 * three ways on the same node processes: `no-links` (each node serves its own clients alone), `links` (links as an
 * operator would set them: nodes holding the same model lend to each other, an image owner borrows an idle image
 * lane) and `replicas` (every node has the same model configs, so the master's catalog makes them one public ID
 * with four replicas; every client goes to the master, which routes by least-request: the peers' way). For each:
 * every node's own p50/p95 by model, the bursting owners' p95 and burst makespans, model loads per node and
 * engine busy time, read from the nodes' own stores.
 */

import type { Agent } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { keepAliveAgent, postJson } from './http-client';
import { laneBody, simImage, simText } from './lending-multi';
import { Cluster } from './lending-trio';
import { BenchScope, sleep } from './scope';
import { formatNumber, formatRatio, percentile } from './table';
import { type TraceNode, type TraceRequest, traceRequests } from './trace-traffic';
import type { BenchOptions, BenchResult, JsonRow } from './types';

const NODES = ['n1', 'n2', 'n3', 'n4'];
/** The same three configs on every node (same hashes: replicas when clients go to the master). */
const MODELS = { a: simText('chat-a', 30, 1500), b: simText('chat-b', 20, 1500), p: simImage('paint', 50, 2000) };
const LOCAL: Record<string, string> = { 'chat-a': 'a', 'chat-b': 'b', paint: 'p' };

/** Who serves what: n1 and n3 live on chat-a, n2 and n4 on chat-b; n4 also paints. Every node bursts. */
export const TRACE_NODES: TraceNode[] = [
  {
    id: 'n1',
    own: [{ model: 'chat-a', lane: 'text', weight: 1, work: [8, 32] }],
    meanGapMs: 9_000,
    bursts: [{ model: 'chat-a', lane: 'text', size: 14, work: [12, 24] }],
  },
  {
    id: 'n2',
    own: [{ model: 'chat-b', lane: 'text', weight: 1, work: [8, 40] }],
    meanGapMs: 8_000,
    bursts: [{ model: 'chat-b', lane: 'text', size: 16, work: [16, 32] }],
  },
  {
    id: 'n3',
    own: [{ model: 'chat-a', lane: 'text', weight: 1, work: [8, 24] }],
    meanGapMs: 11_000,
    bursts: [{ model: 'chat-a', lane: 'text', size: 12, work: [12, 24] }],
  },
  {
    id: 'n4',
    own: [
      { model: 'chat-b', lane: 'text', weight: 3, work: [8, 32] },
      { model: 'paint', lane: 'image', weight: 1, work: [6, 10] },
    ],
    meanGapMs: 9_000,
    bursts: [
      { model: 'paint', lane: 'image', size: 8, work: [8, 8] },
      { model: 'chat-b', lane: 'text', size: 10, work: [12, 24] },
    ],
  },
];

/** The operator's links: same-model pairs both ways, and the painter's burst onto the idle image lane of n2. */
const LINKS: {
  owner: [string, string];
  helper: [string, string];
  lane?: 'image';
  flags?: { load_if_unloaded: boolean; restore_after_borrow: boolean };
}[] = [
  { owner: ['n1', 'a'], helper: ['n3', 'a'] },
  { owner: ['n3', 'a'], helper: ['n1', 'a'] },
  { owner: ['n2', 'b'], helper: ['n4', 'b'] },
  { owner: ['n4', 'b'], helper: ['n2', 'b'] },
  {
    owner: ['n4', 'p'],
    helper: ['n2', 'p'],
    lane: 'image',
    flags: { load_if_unloaded: true, restore_after_borrow: true },
  },
];

type Setup = 'no-links' | 'links' | 'replicas';

interface Answer {
  req: TraceRequest;
  ok: boolean;
  ms: number;
  endedAt: number;
}

async function replay(
  c: Cluster,
  agent: Agent,
  reqs: TraceRequest[],
  viaMaster: boolean,
): Promise<{ answers: Answer[]; from: number; to: number }> {
  const from = Date.now();
  const t0 = performance.now();
  const answers = await Promise.all(
    reqs.map(async (req): Promise<Answer> => {
      await sleep(Math.max(0, req.atMs - (performance.now() - t0)));
      const url = (viaMaster ? c.master : c.node(req.node)).url;
      const body = { ...laneBody(req.lane, req.model, req.work), ...(req.stream ? { stream: true } : {}) };
      try {
        const r = await postJson(
          `${url}/v1/${req.lane === 'text' ? 'chat/completions' : 'images/generations'}`,
          body,
          agent,
        );
        return {
          req,
          ok: r.status === 200 && (!req.stream || r.body.includes('[DONE]')),
          ms: r.totalMs,
          endedAt: Date.now(),
        };
      } catch {
        return { req, ok: false, ms: performance.now() - t0 - req.atMs, endedAt: Date.now() };
      }
    }),
  );
  return { answers, from, to: Date.now() };
}

/** Loads and engine busy time each node recorded in [from, to] (its store; WAL readers never block it). */
function nodeWork(dir: string, nodeId: string, from: number, to: number): { loads: number; busyMs: number } {
  const db = new Database(join(dir, 'store', 'router.db'), { readonly: true, fileMustExist: true });
  try {
    const loads = (
      db
        .prepare(
          'SELECT COUNT(*) AS n FROM load_analytics WHERE node_id = ? AND success = 1 AND finished_at BETWEEN ? AND ?',
        )
        .get(nodeId, from, to) as { n: number }
    ).n;
    const busy = (
      db
        .prepare(
          'SELECT COALESCE(SUM(service_ms), 0) AS ms FROM request_analytics WHERE node_id = ? AND finished_at BETWEEN ? AND ?',
        )
        .get(nodeId, from, to) as { ms: number }
    ).ms;
    return { loads, busyMs: busy };
  } finally {
    db.close();
  }
}

/**
 * The master's count of picks where least-request lacked a replica's engine metrics and took a random ready pod
 * (ROUTE-2): a replica whose lane holds another model has no engine to scrape for this one.
 */
async function routingFallbacks(masterUrl: string): Promise<number> {
  const text = await (await fetch(`${masterUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('routerdesk_routing_fallbacks_total'))
    .reduce((a, l) => a + Number(l.trim().split(/\s+/).pop()), 0);
}

/** The figures of one setup: JSON row fields (pure over the answers and the nodes' work). */
export function traceRow(
  setup: Setup,
  answers: Answer[],
  work: Record<string, { loads: number; busyMs: number }>,
): JsonRow {
  const ok = answers.filter((a) => a.ok);
  const p = (xs: Answer[], q: number) =>
    percentile(
      xs.map((a) => a.ms),
      q,
    );
  const own = (n: string) => ok.filter((a) => a.req.kind === 'own' && a.req.node === n);
  const byModel = Object.fromEntries(
    NODES.map((n) => [
      n,
      Object.fromEntries(
        [...new Set(own(n).map((a) => a.req.model))].sort().map((m) => {
          const xs = own(n).filter((a) => a.req.model === m);
          return [m, { p50_ms: p(xs, 50), p95_ms: p(xs, 95), n: xs.length }];
        }),
      ),
    ]),
  );
  const bursts = [...new Set(answers.filter((a) => a.req.burst !== null).map((a) => a.req.burst!))]
    .sort((a, b) => a - b)
    .map((b) => {
      const xs = answers.filter((a) => a.req.burst === b);
      const start = Math.min(...xs.map((a) => a.endedAt - a.ms));
      return {
        node: xs[0].req.node,
        model: xs[0].req.model,
        jobs: xs.length,
        makespan_ms: Math.max(...xs.map((a) => a.endedAt)) - start,
      };
    });
  return {
    benchmark: 'lending-scenarios',
    scenario: 'trace',
    setup,
    owner_p95_ms: p(
      ok.filter((a) => a.req.kind === 'burst'),
      95,
    ),
    own_p95_ms: Object.fromEntries(NODES.map((n) => [n, p(own(n), 95)])),
    own_by_model: byModel,
    bursts,
    loads: Object.fromEntries(NODES.map((n) => [n, work[n]?.loads ?? null])),
    busy_ms: Object.fromEntries(NODES.map((n) => [n, work[n]?.busyMs ?? null])),
    requests: answers.length,
    failed: answers.length - ok.length,
  };
}

/** Targets: with links every node's own p95 ≤ 1.05 × without; the owners' p95 with links ≤ the replicas'. */
export function traceVerdict(rows: JsonRow[]): { target: string; meets: boolean; worstOwnRatio: number | null } {
  const get = (s: Setup) => rows.find((r) => r.setup === s)!;
  const [none, links, reps] = [get('no-links'), get('links'), get('replicas')];
  const ratios = NODES.map((n) => {
    const a = (links.own_p95_ms as Record<string, number | null>)[n];
    const b = (none.own_p95_ms as Record<string, number | null>)[n];
    return a !== null && b ? a / b : null;
  }).filter((x): x is number => x !== null);
  const worst = ratios.length ? Math.max(...ratios) : null;
  const owners =
    (links.owner_p95_ms as number | null) !== null &&
    (reps.owner_p95_ms as number | null) !== null &&
    (links.owner_p95_ms as number) <= (reps.owner_p95_ms as number);
  return {
    target: "links: each node's own p95 ≤ 1.05 × no links; owners' p95 ≤ replicas'",
    meets: worst !== null && worst <= 1.05 && owners && links.failed === 0,
    worstOwnRatio: worst,
  };
}

/** Each node's lanes back on its own models (one request each), so every setup starts from the same state. */
async function home(c: Cluster, agent: Agent): Promise<void> {
  await Promise.all(
    TRACE_NODES.map(async (n) => {
      for (const m of n.own)
        await postJson(
          `${c.node(n.id).url}/v1/${m.lane === 'text' ? 'chat/completions' : 'images/generations'}`,
          laneBody(m.lane, m.model, m.work[0]),
          agent,
        );
    }),
  );
  await c.settle(1_500);
}

export async function runTrace(o: BenchOptions): Promise<BenchResult> {
  const recordedMs = o.quick ? 300_000 : 600_000;
  const compress = 5;
  const reqs = traceRequests({ seed: 29, nodes: TRACE_NODES, recordedMs, compress });
  const scope = new BenchScope();
  const agent = keepAliveAgent(512);
  const rows: JsonRow[] = [];
  try {
    const c = await Cluster.startNodes(scope, {
      nodes: Object.fromEntries(NODES.map((n) => [n, MODELS])),
      routing: { strategy: 'least-request' },
    });
    o.log(
      `trace: 4 nodes up; ${reqs.length} requests over ${formatNumber(recordedMs / compress / 1000, 0)} s (${recordedMs / 60_000} recorded minutes ÷ ${compress})`,
    );
    // Warm-up: every node measures every model it may serve (fits and loads), then goes home.
    for (const n of NODES) {
      for (const m of Object.keys(LOCAL)) {
        const lane = m === 'paint' ? 'image' : 'text';
        for (const w of lane === 'text' ? [8, 24, 8, 24] : [8, 8, 8, 8])
          await postJson(
            `${c.node(n).url}/v1/${lane === 'text' ? 'chat/completions' : 'images/generations'}`,
            laneBody(lane, m, w),
            agent,
          );
      }
    }
    for (const setup of ['no-links', 'links', 'replicas'] as Setup[]) {
      if (setup === 'links')
        for (const l of LINKS)
          await c.linkModels(
            { node: l.owner[0], model: l.owner[1] },
            { node: l.helper[0], model: l.helper[1] },
            l.flags,
            l.lane,
          );
      if (setup === 'replicas') await c.unlinkAll();
      await home(c, agent);
      o.log(`trace: replaying ${setup}`);
      const fallbacksBefore = await routingFallbacks(c.master.url);
      const run = await replay(c, agent, reqs, setup === 'replicas');
      await c.settle();
      const work = Object.fromEntries(NODES.map((n) => [n, nodeWork(c.node(n).dir!, n, run.from, run.to)]));
      rows.push({
        ...traceRow(setup, run.answers, work),
        ...(setup === 'replicas'
          ? { routing_fallbacks: (await routingFallbacks(c.master.url)) - fallbacksBefore }
          : {}),
      });
    }
  } finally {
    agent.destroy();
    await scope.close();
  }
  const v = traceVerdict(rows);
  const links = rows.find((r) => r.setup === 'links')!;
  Object.assign(links, { target: v.target, meets: v.meets, worst_own_p95_ratio: v.worstOwnRatio });
  const ms = (x: unknown) => (typeof x === 'number' ? formatNumber(x, 0) : null);
  const none = rows.find((r) => r.setup === 'no-links')!;
  const tableRows = rows.flatMap((r) =>
    NODES.map((n, i) => [
      r.setup as string,
      n,
      Object.entries(
        (r.own_by_model as Record<string, Record<string, { p50_ms: number | null; p95_ms: number | null }>>)[n],
      )
        .map(([m, x]) => `${m} ${ms(x.p50_ms)}/${ms(x.p95_ms)}`)
        .join(', '),
      ms((r.own_p95_ms as Record<string, number | null>)[n]),
      formatRatio(
        ((r.own_p95_ms as Record<string, number | null>)[n] ?? NaN) /
          ((none.own_p95_ms as Record<string, number | null>)[n] ?? NaN),
      ),
      (r.loads as Record<string, number | null>)[n],
      ms((r.busy_ms as Record<string, number | null>)[n]),
      i === 0 ? ms(r.owner_p95_ms) : null,
      i === 0
        ? (r.bursts as { node: string; makespan_ms: number }[]).map((b) => `${b.node} ${ms(b.makespan_ms)}`).join(', ')
        : null,
      i === 0 ? `${r.failed}/${r.requests}` : null,
    ]),
  );
  return {
    tables: [
      {
        title: `lending-scenarios trace: ${reqs.length} requests on 4 nodes (${recordedMs / 60_000} recorded minutes replayed in ${formatNumber(recordedMs / compress / 1000, 0)} s), three ways on the same processes`,
        columns: [
          'setup',
          'node',
          'own p50/p95 ms by model',
          'own p95 ms',
          '÷ no links',
          'loads',
          'busy ms',
          'owners p95 ms',
          'burst makespans ms',
          'failed',
        ],
        rows: tableRows,
        notes: [
          "own: each node's steady traffic (its clients, its models); owners: the burst requests; loads: model loads the node did during the replay; busy: its engines' service time;",
          'links: n1 ↔ n3 on chat-a, n2 ↔ n4 on chat-b, n4 → n2 on paint (load if unloaded, restore); replicas: every client to the master, least-request over the 4 replicas;',
          `replicas: ${rows.find((r) => r.setup === 'replicas')?.routing_fallbacks ?? '—'} of ${reqs.length} picks fell back to a random replica (least-request lacks the engine metrics of a replica whose lane holds another model; ROUTE-2);`,
          `target: ${v.target}: ${v.meets ? 'meets' : 'MISSES'} (worst own p95 ratio ${formatRatio(v.worstOwnRatio)}; owners p95 links ${ms(links.owner_p95_ms)} ms, replicas ${ms(rows.find((r) => r.setup === 'replicas')!.owner_p95_ms)} ms).`,
        ],
      },
    ],
    summary: [
      {
        benchmark: 'lending-scenarios',
        measure: `trace: ${v.target}`,
        value: v.meets ? 'meets' : 'MISSES',
        ratio: v.worstOwnRatio,
        against: 'own p95 without links',
      },
    ],
    json: rows,
  };
}

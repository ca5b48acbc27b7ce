/**
 * The multi-node lending scenarios (part of lending-scenarios): several owners and helpers on real node processes
 * with sim engines at realistic costs (loads of seconds, tens of ms per token, image steps). Each scenario warms
 * its cluster so every fit and load is measured by the nodes, runs its bursts (each on its node at its offset)
 * without links and with them, and compares the makespan with the exact optimum over every node the links allow
 * (`optimalCluster`), or a stated lower bound when the job count puts the exact search out of reach.
 */
import type { Agent } from 'node:http';
import type { ModelConfigInput } from '../config';
import { keepAliveAgent, postJson } from './http-client';
import { type ClusterInput, type ClusterJob, clusterLowerBound, optimalCluster } from './lending-optimum';
import { bodies, Cluster, fitCost, type NodeModel, sequential } from './lending-trio';
import { BenchScope, sleep, until } from './scope';
import { median } from './table';
import type { BenchOptions, JsonRow } from './types';

const DEPTH = 2;
const IMAGE_SIZE = 64 * 64;

export const simText = (name: string, tokenMs: number, loadMs: number): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['text'],
  contextsize: 4096,
  parallel: 1,
  sim: { load_time: `${loadMs}ms`, token_time: `${tokenMs}ms` },
});
export const simImage = (name: string, stepMs: number, loadMs: number): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['image'],
  parallel: 1,
  sim: { load_time: `${loadMs}ms`, step_time: `${stepMs}ms` },
});

export type Lane = 'text' | 'image';

/** One request body for a lane: max_tokens for text, steps for an image. */
export const laneBody = (lane: Lane, model: string, work: number): Record<string, unknown> =>
  lane === 'text'
    ? bodies(model, 1, [work])[0]
    : { model, prompt: 'a lighthouse at dusk', size: '64x64', steps: work, n: 1 };

const laneWork = (lane: Lane, work: number) => (lane === 'text' ? work : IMAGE_SIZE * work);

/** Posts one request to a node's OpenAI API on the lane's endpoint; throws unless it is answered 200. */
export async function call(url: string, agent: Agent, lane: Lane, body: Record<string, unknown>): Promise<number> {
  const r = await postJson(`${url}/v1/${lane === 'text' ? 'chat/completions' : 'images/generations'}`, body, agent);
  if (r.status !== 200) throw new Error(`${lane} at ${url}: ${r.status} ${r.body.slice(0, 300)}`);
  return r.totalMs;
}

interface Burst {
  node: string;
  /** The owner's local ID (also its public name in these clusters). */
  model: string;
  publicId: string;
  lane: Lane;
  /** Offset from the first burst, ms. */
  atMs: number;
  /** Each request's work: max_tokens (text) or steps (image). */
  works: number[];
}

interface Link {
  owner: NodeModel;
  helper: NodeModel;
  lane?: Lane;
  flags?: { load_if_unloaded?: boolean; restore_after_borrow?: boolean };
}

export interface MultiScenario {
  name: string;
  nodes: Record<string, Record<string, ModelConfigInput>>;
  links: Link[];
  bursts: Burst[];
  /** Own traffic that measures every fit and load. */
  warm(c: Cluster, agent: Agent): Promise<void>;
  /** What each helper lane must hold when the bursts start (a model it would have to switch from). */
  holds?: { node: string; lane: Lane; model: string }[];
  cluster?: Record<string, unknown>;
  /** Makespan ≤ max × the optimum (or the lower bound). */
  max: number;
  about: string;
}

interface Round {
  makespanMs: number;
  perBurstMs: number[];
  latencies: number[];
}

async function runBursts(c: Cluster, agent: Agent, s: MultiScenario): Promise<Round> {
  const t0 = performance.now();
  const latencies: number[] = [];
  const perBurstMs = await Promise.all(
    s.bursts.map(async (b) => {
      await sleep(b.atMs);
      const url = c.node(b.node).url;
      await Promise.all(
        b.works.map(async (w) => latencies.push(await call(url, agent, b.lane, laneBody(b.lane, b.publicId, w)))),
      );
      return performance.now() - t0;
    }),
  );
  return { makespanMs: Math.max(...perBurstMs), perBurstMs, latencies };
}

/** Machines of the optimum: one per node and runtime lane the bursts and links touch. */
async function clusterInput(c: Cluster, s: MultiScenario): Promise<ClusterInput> {
  const key = (node: string, lane: Lane) => `${node}#${lane}`;
  const machines: string[] = [];
  const machine = (node: string, lane: Lane) => {
    const k = key(node, lane);
    if (!machines.includes(k)) machines.push(k);
    return machines.indexOf(k);
  };
  const cost = async (node: string, model: string) => {
    const st = await c.modelState(c.node(node), model);
    const f = fitCost(st.fit);
    if (!f) throw new Error(`${s.name}: ${node}/${model} has no fit after warming up`);
    return { f, loadMs: st.loadMs ?? 0 };
  };
  const jobs: ClusterJob[] = [];
  const loads = new Map<number, number>();
  for (const b of s.bursts) {
    const own = machine(b.node, b.lane);
    const ownCost = await cost(b.node, b.model);
    const helpers = await Promise.all(
      s.links
        .filter((l) => l.owner.node === b.node && l.owner.model === b.model)
        .map(async (l) => {
          const m = machine(l.helper.node, l.lane ?? 'text');
          const hc = await cost(l.helper.node, l.helper.model);
          const mustSwitch = (s.holds ?? []).some(
            (h) => h.node === l.helper.node && h.lane === (l.lane ?? 'text') && h.model !== l.helper.model,
          );
          if (mustSwitch) loads.set(m, hc.loadMs);
          return { m, f: hc.f };
        }),
    );
    b.works.forEach((w, i) => {
      const costMs: (number | null)[] = [];
      costMs[own] = ownCost.f(laneWork(b.lane, w));
      for (const h of helpers) costMs[h.m] = h.f(laneWork(b.lane, w));
      jobs.push({ releaseMs: b.atMs, owner: own, costMs, pinned: i < DEPTH });
    });
  }
  for (const j of jobs) j.costMs = machines.map((_, k) => j.costMs[k] ?? null);
  return { jobs, loadMs: machines.map((_, k) => loads.get(k) ?? 0) };
}

/**
 * The best makespan when each owner borrows from one helper only (its best one): what one lease per owner
 * (LEASE-4) can reach at most if that lease never moves. Every combination of one helper per owner, each solved exactly.
 */
function oneHelperEach(input: ClusterInput): number | null {
  const owners = [...new Set(input.jobs.map((j) => j.owner))];
  const choices = owners.map((o) => {
    const hs = new Set<number>();
    for (const j of input.jobs) if (j.owner === o) j.costMs.forEach((c, k) => c !== null && k !== o && hs.add(k));
    return [...hs];
  });
  let best: number | null = null;
  const walk = (i: number, pick: Map<number, number>) => {
    if (i === owners.length) {
      const jobs = input.jobs.map((j) => ({
        ...j,
        costMs: j.costMs.map((c, k) => (k === j.owner || pick.get(j.owner) === k ? c : null)),
      }));
      const r = optimalCluster({ ...input, jobs });
      if (r && (best === null || r.makespanMs < best)) best = r.makespanMs;
      return;
    }
    if (!choices[i].length) return walk(i + 1, pick);
    for (const h of choices[i]) walk(i + 1, new Map(pick).set(owners[i], h));
  };
  walk(0, new Map());
  return best;
}

export async function runMultiScenario(s: MultiScenario, o: BenchOptions, reps: number): Promise<JsonRow> {
  const scope = new BenchScope();
  const agent = keepAliveAgent(256);
  try {
    const c = await Cluster.startNodes(scope, { nodes: s.nodes, cluster: s.cluster });
    o.log(`${s.name}: cluster of ${Object.keys(s.nodes).length} up`);
    await s.warm(c, agent);
    await c.settle();
    const holding = async () => {
      for (const h of s.holds ?? [])
        await until(
          async () => (await c.lanes(c.node(h.node))).find((l) => l.lane === h.lane)?.loaded === h.model,
          `${h.node} to hold ${h.model}`,
          30_000,
          50,
        );
    };
    const alone: Round[] = [];
    for (let r = 0; r < reps; r++) {
      alone.push(await runBursts(c, agent, s));
      await c.settle();
    }
    for (const l of s.links) await c.linkModels(l.owner, l.helper, l.flags, l.lane);
    await sleep(500);
    const input = await clusterInput(c, s);
    const exact = optimalCluster(input);
    const lowerBound = exact ? null : clusterLowerBound(input);
    const oneEach = exact ? oneHelperEach(input) : null;
    const lending: Round[] = [];
    const decided: Record<string, number> = {};
    const lentTo: Record<string, number> = {};
    for (let r = 0; r < reps; r++) {
      await holding();
      const since = Date.now();
      lending.push(await runBursts(c, agent, s));
      await c.settle();
      const rows = await c.decisions(since);
      for (const d of rows) {
        const k =
          d.kind === 'plan'
            ? `plan ${d.outcome}${d.reason ? `/${d.reason}` : ''}`
            : `${d.kind} ${d.event}${d.reason ? `/${d.reason}` : ''}`;
        decided[k] = (decided[k] ?? 0) + 1;
        if (d.event === 'lent')
          lentTo[`${d.ownerModel}→${d.helperModel}`] = (lentTo[`${d.ownerModel}→${d.helperModel}`] ?? 0) + 1;
      }
    }
    o.log(
      `${s.name}: decisions: ${Object.entries(decided)
        .map(([k, n]) => `${k} ×${n}`)
        .join(', ')}`,
    );
    o.log(
      `${s.name}: lent: ${
        Object.entries(lentTo)
          .map(([k, n]) => `${k} ×${n}`)
          .join(', ') || 'none'
      }`,
    );
    const makespan = median(lending.map((x) => x.makespanMs))!;
    const baseline = exact?.makespanMs ?? lowerBound!;
    const ratio = makespan / baseline;
    return {
      benchmark: 'lending-scenarios',
      scenario: s.name,
      makespan_ms: makespan,
      p95_ms: median(
        lending.map(
          (x) => [...x.latencies].sort((a, b) => a - b)[Math.max(0, Math.ceil(0.95 * x.latencies.length) - 1)],
        ),
      ),
      ...(exact
        ? { optimum_ms: exact.makespanMs, optimum_jobs_on: exact.jobsOn }
        : { optimum_ms: null, lower_bound_ms: lowerBound }),
      one_helper_each_ms: oneEach,
      no_lending_ms: median(alone.map((x) => x.makespanMs)),
      per_burst_ms: s.bursts.map((b, i) => ({
        node: b.node,
        model: b.model,
        at_ms: b.atMs,
        jobs: b.works.length,
        lending_ms: median(lending.map((x) => x.perBurstMs[i])),
        no_lending_ms: median(alone.map((x) => x.perBurstMs[i])),
      })),
      ratio_optimum: ratio,
      ratio_no_lending: makespan / median(alone.map((x) => x.makespanMs))!,
      jobs: input.jobs.length,
      bursts: reps,
      lent_per_burst: Object.values(lentTo).reduce((a, b) => a + b, 0) / reps,
      lent_to: lentTo,
      decisions: decided,
      target: `≤ ${s.max.toFixed(2)} × ${exact ? 'optimum' : 'lower bound'}`,
      meets: ratio <= s.max,
      about: s.about,
    };
  } finally {
    agent.destroy();
    await scope.close();
  }
}

/** Sequential own requests of each size on a node's model (its fit, min_samples 3). */
export const warmOwn = async (
  c: Cluster,
  agent: Agent,
  node: string,
  model: string,
  lane: Lane,
  works: number[],
  n = 2,
) => {
  if (lane === 'text') {
    await sequential(c.node(node), agent, bodies(model, works.length * n, works));
    return;
  }
  for (let i = 0; i < works.length * n; i++)
    await call(c.node(node).url, agent, lane, laneBody(lane, model, works[i % works.length]));
};

/** The four multi-node scenarios: jobs of hundreds of ms, loads of 1.5–2 s. */
export function multiScenarios(quick: boolean): MultiScenario[] {
  const k = quick ? 8 : 12;
  const tok = 16;
  const jobs = (n: number, w = tok) => Array(n).fill(w);
  return [
    {
      name: 'two-owners-one-helper',
      max: 1.15,
      about:
        'owners o1 (30 ms/token) and o2 (45 ms/token) burst 1.5 s apart; both link to one idle helper h (20 ms/token)',
      nodes: {
        o1: { a1: simText('model-a1', 30, 1500) },
        o2: { a2: simText('model-a2', 45, 1500) },
        h: { b: simText('model-b', 20, 1500) },
      },
      links: [
        { owner: { node: 'o1', model: 'a1' }, helper: { node: 'h', model: 'b' } },
        { owner: { node: 'o2', model: 'a2' }, helper: { node: 'h', model: 'b' } },
      ],
      bursts: [
        { node: 'o1', model: 'a1', publicId: 'model-a1', lane: 'text', atMs: 0, works: jobs(k) },
        { node: 'o2', model: 'a2', publicId: 'model-a2', lane: 'text', atMs: 1500, works: jobs(k) },
      ],
      warm: async (c, agent) => {
        await warmOwn(c, agent, 'o1', 'model-a1', 'text', [8, tok]);
        await warmOwn(c, agent, 'o2', 'model-a2', 'text', [8, tok]);
        await warmOwn(c, agent, 'h', 'model-b', 'text', [8, tok]);
      },
    },
    {
      name: 'one-owner-two-helpers',
      max: 1.15,
      about:
        'owner o (40 ms/token) links to a slower helper s (30 ms/token, loaded) and a faster one f (10 ms/token) that must switch from its own x (loads 1.5 s)',
      nodes: {
        o: { a: simText('model-a', 40, 1500) },
        s: { c: simText('model-c', 30, 1500) },
        f: { x: simText('model-x', 20, 1500), b: simText('model-b', 10, 1500) },
      },
      links: [
        { owner: { node: 'o', model: 'a' }, helper: { node: 's', model: 'c' } },
        {
          owner: { node: 'o', model: 'a' },
          helper: { node: 'f', model: 'b' },
          flags: { load_if_unloaded: true, restore_after_borrow: true },
        },
      ],
      holds: [{ node: 'f', lane: 'text', model: 'x' }],
      bursts: [{ node: 'o', model: 'a', publicId: 'model-a', lane: 'text', atMs: 0, works: jobs(20) }],
      cluster: { offload_probe_idle: '5s' },
      warm: async (c, agent) => {
        await warmOwn(c, agent, 'o', 'model-a', 'text', [8, tok]);
        await warmOwn(c, agent, 's', 'model-c', 'text', [8, tok]);
        await warmOwn(c, agent, 'f', 'model-x', 'text', [tok], 1);
        await warmOwn(c, agent, 'f', 'model-b', 'text', [8, tok]);
        await warmOwn(c, agent, 'f', 'model-x', 'text', [tok], 1);
      },
    },
    {
      name: 'mutual-links',
      max: 1.15,
      about: 'n1 (30 ms/token), n2 (25), n3 (35), each linked to the other two; bursts on n1, n2, n3 at 0, 1 s, 2 s',
      nodes: {
        n1: { a: simText('model-n1', 30, 1500) },
        n2: { b: simText('model-n2', 25, 1500) },
        n3: { c: simText('model-n3', 35, 1500) },
      },
      links: [
        ['n1', 'a'],
        ['n2', 'b'],
        ['n3', 'c'],
      ].flatMap(([on, om], _, all) =>
        all
          .filter(([hn]) => hn !== on)
          .map(([hn, hm]) => ({ owner: { node: on, model: om }, helper: { node: hn, model: hm } })),
      ),
      bursts: [
        { node: 'n1', model: 'a', publicId: 'model-n1', lane: 'text', atMs: 0, works: jobs(k) },
        { node: 'n2', model: 'b', publicId: 'model-n2', lane: 'text', atMs: 1000, works: jobs(k) },
        { node: 'n3', model: 'c', publicId: 'model-n3', lane: 'text', atMs: 2000, works: jobs(k) },
      ],
      warm: async (c, agent) => {
        await warmOwn(c, agent, 'n1', 'model-n1', 'text', [8, tok]);
        await warmOwn(c, agent, 'n2', 'model-n2', 'text', [8, tok]);
        await warmOwn(c, agent, 'n3', 'model-n3', 'text', [8, tok]);
      },
    },
    {
      name: 'image-and-text',
      max: 1.15,
      about:
        'helper h holds text b (20 ms/token) and image p (40 ms/step); ot (text a, 35 ms/token) and oi (image q, 80 ms/step) burst together',
      nodes: {
        ot: { a: simText('model-a', 35, 1500) },
        oi: { q: simImage('paint-q', 80, 2000) },
        h: { b: simText('model-b', 20, 1500), p: simImage('paint-p', 40, 2000) },
      },
      links: [
        { owner: { node: 'ot', model: 'a' }, helper: { node: 'h', model: 'b' } },
        { owner: { node: 'oi', model: 'q' }, helper: { node: 'h', model: 'p' }, lane: 'image' },
      ],
      bursts: [
        { node: 'ot', model: 'a', publicId: 'model-a', lane: 'text', atMs: 0, works: jobs(k) },
        { node: 'oi', model: 'q', publicId: 'paint-q', lane: 'image', atMs: 0, works: jobs(quick ? 6 : 8, 8) },
      ],
      warm: async (c, agent) => {
        await warmOwn(c, agent, 'ot', 'model-a', 'text', [8, tok]);
        await warmOwn(c, agent, 'h', 'model-b', 'text', [8, tok]);
        await warmOwn(c, agent, 'oi', 'paint-q', 'image', [8], 4);
        await warmOwn(c, agent, 'h', 'paint-p', 'image', [8], 4);
      },
    },
  ];
}

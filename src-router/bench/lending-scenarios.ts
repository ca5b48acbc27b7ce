/**
 * lending-scenarios: lending proven scenario by scenario on real node processes (a master, an owner slave and a
 * helper slave; sim engines, and for `real-engines` the built-in llama.cpp engine and llama-server, one row each). Each scenario starts its own
 * cluster, warms it so that every fit and load is measured by the nodes themselves, runs bursts without the link
 * (the no-lending baseline) and with it, and compares the makespan with the exact optimum: the best split of the
 * burst's discrete jobs over owner and helper from the nodes' own measured per-job and load costs and the depth-2
 * pipeline (`lending-optimum.ts`), not K / (1/a + 1/b).
 */

import { mkdirSync } from 'node:fs';
import type { Agent } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { decideEngine, locateEngine } from '../backends/engine-binaries';
import type { ModelConfigInput } from '../config';
import { writeTinyLlamaGguf } from '../engines/llama-node/gguf-writer';
import { buildTinyVocab, TokenType } from '../engines/llama-node/tiny-vocab';
import { keepAliveAgent } from './http-client';
import { multiScenarios, runMultiScenario } from './lending-multi';
import { type JobCosts, optimalSplit } from './lending-optimum';
import { runTrace } from './lending-trace';
import { type BurstResult, bodies, burst, fitCost, sequential, Trio, type TrioOptions } from './lending-trio';
import { BenchScope, sleep, until } from './scope';
import { formatNumber, formatRatio, median } from './table';
import type { Benchmark, BenchOptions, BenchResult, JsonRow } from './types';

const DEPTH = 2;
const sim = (name: string, tokenMs: number, loadMs = 100): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['text'],
  contextsize: 4096,
  parallel: 1,
  sim: { load_time: `${loadMs}ms`, token_time: `${tokenMs}ms` },
});

/** What a scenario must show: its makespan within `max` × the optimum or × the no-lending makespan. */
interface Target {
  against: 'optimum' | 'no_lending';
  max: number;
}

interface ScenarioCore {
  benchmark: string;
  scenario: string;
  makespan_ms: number | null;
  p95_ms: number | null;
  optimum_ms: number | null;
  no_lending_ms: number | null;
  ratio_optimum: number | null;
  ratio_no_lending: number | null;
  target: string;
  meets: boolean;
}
type ScenarioRow = ScenarioCore & JsonRow;

const p95 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)] : null;
};

function verdict(
  row: Omit<ScenarioCore, 'target' | 'meets' | 'ratio_optimum' | 'ratio_no_lending'> & Record<string, unknown>,
  target: Target,
): ScenarioRow {
  const rOpt = row.makespan_ms !== null && row.optimum_ms ? row.makespan_ms / row.optimum_ms : null;
  const rNo = row.makespan_ms !== null && row.no_lending_ms ? row.makespan_ms / row.no_lending_ms : null;
  const r = target.against === 'optimum' ? rOpt : rNo;
  return {
    ...row,
    ratio_optimum: rOpt,
    ratio_no_lending: rNo,
    target: `≤ ${target.max.toFixed(2)} × ${target.against === 'optimum' ? 'optimum' : 'no lending'}`,
    meets: r !== null && r <= target.max,
  };
}

interface BurstScenario {
  name: string;
  trio: TrioOptions;
  link: { owner: string; helper: string; flags?: { load_if_unloaded?: boolean; restore_after_borrow?: boolean } };
  /** Public model names the clients use. */
  ownerModel: string;
  /** Own traffic that measures each side's fit (and the helper's loads). */
  warm(t: Trio, agent: Agent): Promise<void>;
  /** max_tokens of each request of the burst. */
  tokens: number[];
  /** What the helper's lane holds when a burst starts (its own model, for switch scenarios), else null. */
  helperHolds: string | null;
  target: Target;
  /** Extra body fields (e.g. temperature for real engines). */
  extra?: Record<string, unknown>;
  /**
   * Where the optimum's per-job costs come from. `fits` (default): the nodes' own fits (sim engines sleep, so a job
   * costs the same whatever else runs). `contended`: engines that share this machine's cores run slower while both
   * work, so each side's job is priced at the mean service time its node recorded during the lending bursts, when
   * both were busy (the solo fits would promise a split no schedule on these cores can reach).
   */
  costs?: 'fits' | 'contended';
}

/** The optimum from what the nodes measured: their fits at each job's work, the helper's load when it must switch. */
async function optimum(
  t: Trio,
  s: BurstScenario,
  works: { owner: number[]; helper: number[] },
): Promise<{ ms: number; helperJobs: number; loadMs: number }> {
  const owner = await t.modelState(t.owner, s.link.owner);
  const helper = await t.modelState(t.helper, s.link.helper);
  const oc = fitCost(owner.fit);
  const hc = fitCost(helper.fit) ?? oc;
  if (!oc || !hc) throw new Error(`${s.name}: the owner has no fit after warming up`);
  const loadMs = s.helperHolds ? (helper.loadMs ?? 0) : 0;
  const jobs: JobCosts[] = works.owner.map((w, i) => ({ ownerMs: oc(w), helperMs: hc(works.helper[i] ?? w) }));
  const split = optimalSplit({ jobs, helperLoadMs: loadMs, pinned: DEPTH });
  return { ms: split.makespanMs, helperJobs: split.helperJobs, loadMs };
}

async function runBurstScenario(s: BurstScenario, o: BenchOptions, reps: number): Promise<ScenarioRow> {
  const scope = new BenchScope();
  const agent = keepAliveAgent(256);
  try {
    const t = await Trio.start(scope, s.trio);
    o.log(`${s.name}: cluster up`);
    await s.warm(t, agent);
    await t.settle();
    const list = () => bodies(s.ownerModel, s.tokens.length, s.tokens).map((b) => ({ ...b, ...s.extra }));
    const alone: BurstResult[] = [];
    for (let r = 0; r < reps; r++) {
      alone.push(await burst(t.owner, agent, list()));
      await t.settle();
    }
    await t.link(s.link.owner, s.link.helper, s.link.flags);
    await sleep(500);
    const works = { owner: s.tokens, helper: s.tokens };
    let opt = s.costs === 'contended' ? null : await optimum(t, s, works);
    const lending: BurstResult[] = [];
    let lent = 0;
    const decided: Record<string, number> = {};
    const windows: [number, number][] = [];
    for (let r = 0; r < reps; r++) {
      if (s.helperHolds)
        await until(
          async () => (await t.lanes(t.helper)).find((l) => l.lane === 'text')?.loaded === s.helperHolds,
          `the helper to hold ${s.helperHolds}`,
          30_000,
          50,
        );
      const since = Date.now();
      lending.push(await burst(t.owner, agent, list()));
      windows.push([since, Date.now()]);
      await t.settle();
      const rows = await t.decisions(since);
      lent += rows.filter((d) => d.event === 'lent').length;
      for (const d of rows) {
        const k =
          d.kind === 'plan'
            ? `plan ${d.outcome}${d.reason ? `/${d.reason}` : ''}`
            : `${d.kind} ${d.event}${d.reason ? `/${d.reason}` : ''}`;
        decided[k] = (decided[k] ?? 0) + 1;
      }
    }
    o.log(
      `${s.name}: decisions during the lending bursts: ${Object.entries(decided)
        .map(([k, n]) => `${k} ×${n}`)
        .join(', ')}`,
    );
    if (!opt) {
      // Engines that share the cores: each burst's jobs as the nodes measured them while both sides were busy in it.
      const perBurst = windows.map((w) => {
        const ownerMs = meanServiceMs(t.owner.dir!, 'owner', s.link.owner, [w]);
        const helperMs = meanServiceMs(t.helper.dir!, 'helper', s.link.helper, [w]);
        if (ownerMs === null || helperMs === null)
          throw new Error(`${s.name}: no service times measured during a burst`);
        o.log(
          `${s.name}: per job while both sides were busy: owner ${ownerMs.toFixed(0)} ms, helper ${helperMs.toFixed(0)} ms`,
        );
        return optimalSplit({ jobs: s.tokens.map(() => ({ ownerMs, helperMs })), helperLoadMs: 0, pinned: DEPTH });
      });
      const mid = [...perBurst].sort((a, b) => a.makespanMs - b.makespanMs)[Math.floor(perBurst.length / 2)];
      opt = { ms: mid.makespanMs, helperJobs: mid.helperJobs, loadMs: 0 };
    }
    o.log(`${s.name}: done`);
    const makespan = median(lending.map((b) => b.makespanMs))!;
    return verdict(
      {
        benchmark: 'lending-scenarios',
        scenario: s.name,
        makespan_ms: makespan,
        p95_ms: median(lending.map((b) => p95(b.latencies)!)),
        optimum_ms: opt.ms,
        no_lending_ms: median(alone.map((b) => b.makespanMs))!,
        jobs: s.tokens.length,
        bursts: reps,
        lent_per_burst: lent / reps,
        optimum_lent: opt.helperJobs,
        helper_load_ms: opt.loadMs,
        decisions: decided,
      },
      s.target,
    );
  } finally {
    agent.destroy();
    await scope.close();
  }
}

/** Sequential own requests on each side: `n` each of these sizes (fits measure varied work). */
const warmBoth =
  (ownerModel: string, helperModel: string, sizes: number[], n = 2) =>
  async (t: Trio, agent: Agent) => {
    await sequential(t.owner, agent, bodies(ownerModel, sizes.length * n, sizes));
    await sequential(t.helper, agent, bodies(helperModel, sizes.length * n, sizes));
  };

/** The helper serves its own x, is switched to b by its own traffic (b's load and fit measured), then back to x. */
const warmSwitch = (ownerModel: string, sizes: number[]) => async (t: Trio, agent: Agent) => {
  await sequential(t.owner, agent, bodies(ownerModel, sizes.length * 2, sizes));
  await sequential(t.helper, agent, bodies('model-x', 2, sizes));
  await sequential(t.helper, agent, bodies('model-b', 4, sizes));
  await sequential(t.helper, agent, bodies('model-x', 2, sizes));
};

function mixedTokens(n: number): number[] {
  // a fixed tenfold spread, 4 … 40 tokens, in a scrambled but reproducible order
  const sizes = [4, 40, 12, 28, 8, 36, 20, 4, 32, 16];
  return Array.from({ length: n }, (_, i) => sizes[(i * 7) % sizes.length]);
}

/** Mean service time of the jobs a node's model ran itself inside the windows (its analytics). */
function meanServiceMs(dir: string, nodeId: string, localId: string, windows: [number, number][]): number | null {
  const db = new Database(join(dir, 'store', 'router.db'), { readonly: true, fileMustExist: true });
  try {
    const q = db.prepare(
      "SELECT service_ms AS ms FROM request_analytics WHERE node_id = ? AND local_id = ? AND outcome = 'ok' AND service_ms IS NOT NULL AND finished_at BETWEEN ? AND ?",
    );
    const xs = windows.flatMap(([a, b]) => (q.all(nodeId, localId, a, b) as { ms: number }[]).map((r) => r.ms));
    return xs.length ? xs.reduce((x, y) => x + y, 0) / xs.length : null;
  } finally {
    db.close();
  }
}

/** Requests a node served itself that finished before `at`, read from its store (WAL: a reader never blocks it). */
function ownServedBefore(dir: string, nodeId: string, at: number): number {
  const db = new Database(join(dir, 'store', 'router.db'), { readonly: true, fileMustExist: true });
  try {
    return (
      db
        .prepare('SELECT COUNT(*) AS n FROM request_analytics WHERE node_id = ? AND finished_at < ?')
        .get(nodeId, at) as { n: number }
    ).n;
  } finally {
    db.close();
  }
}

async function ggufPair(scope: BenchScope): Promise<{ big: string; small: string }> {
  const dir = scope.tempDir('routerdesk-bench-gguf-');
  mkdirSync(dir, { recursive: true });
  const big = join(dir, 'owner-big.gguf');
  const small = join(dir, 'helper-small.gguf');
  await writeTinyLlamaGguf(big, { embd: 512, layers: 8, type: 'f16', seed: 11 });
  await writeTinyLlamaGguf(small, { embd: 256, layers: 4, type: 'f16', seed: 7 });
  return { big, small };
}

const llama = (name: string, model: string): ModelConfigInput => ({
  name,
  backend: 'llama-node',
  model,
  capabilities: ['text'],
  contextsize: 512,
  parallel: 1,
});

/** helper-busy: the helper serves its own model steadily; the link would have to switch it away. */
async function helperBusy(o: BenchOptions, reps: number): Promise<ScenarioRow> {
  const scope = new BenchScope();
  const agent = keepAliveAgent(256);
  const k = o.quick ? 16 : 30;
  try {
    const t = await Trio.start(scope, {
      owner: { a: sim('model-a', 10) },
      helper: { x: sim('model-x', 8, 400), b: sim('model-b', 6, 400) },
      cluster: { offload_probe_idle: '5s' },
    });
    o.log('helper-busy: cluster up');
    await warmSwitch('model-a', [10])(t, agent);
    await t.settle();
    const round = async () => {
      let on = true;
      const own: number[] = [];
      const loop = (async () => {
        while (on) own.push(...(await sequential(t.helper, agent, bodies('model-x', 1, [10]))));
      })();
      await sleep(300);
      const b = await burst(t.owner, agent, bodies('model-a', k, [10]));
      on = false;
      await loop;
      await t.settle();
      return { makespan: b.makespanMs, helperP95: p95(own)! };
    };
    const alone = [];
    for (let r = 0; r < reps; r++) alone.push(await round());
    await t.link('a', 'b', { load_if_unloaded: true, restore_after_borrow: true });
    await sleep(500);
    const since = Date.now();
    const linked = [];
    for (let r = 0; r < reps; r++) linked.push(await round());
    const lent = (await t.decisions(since)).filter((d) => d.event === 'lent').length;
    const row = verdict(
      {
        benchmark: 'lending-scenarios',
        scenario: 'helper-busy',
        makespan_ms: median(linked.map((x) => x.makespan))!,
        p95_ms: null,
        optimum_ms: null,
        no_lending_ms: median(alone.map((x) => x.makespan))!,
        jobs: k,
        bursts: reps,
        lent_per_burst: lent / reps,
        helper_own_p95_ms: median(linked.map((x) => x.helperP95)),
        helper_own_p95_no_link_ms: median(alone.map((x) => x.helperP95)),
      },
      { against: 'no_lending', max: 1.03 },
    );
    const helperRatio = (row.helper_own_p95_ms as number) / (row.helper_own_p95_no_link_ms as number);
    return {
      ...row,
      ratio_helper_p95: helperRatio,
      target: `${row.target}; helper's own p95 ≤ 1.05 × without the link`,
      meets: row.meets && helperRatio <= 1.05,
    };
  } finally {
    agent.destroy();
    await scope.close();
  }
}

/** cold-start: fresh nodes (no fits, no token profiles; models loaded at boot): owner requests before the first granted lease. */
async function coldStart(o: BenchOptions): Promise<ScenarioRow> {
  const scope = new BenchScope();
  const agent = keepAliveAgent(64);
  const minSamples = 3;
  try {
    const t = await Trio.start(scope, {
      owner: { a: sim('model-a', 10) },
      helper: { b: sim('model-b', 6) },
      startup: { owner: 'a', helper: 'b' },
      cluster: { scheduling_min_samples: minSamples },
    });
    await t.link('a', 'b');
    await until(
      async () => (await t.lanes(t.helper)).some((l) => l.loaded === 'b'),
      'the helper model loaded at boot',
      30_000,
    );
    o.log('cold-start: cluster up, nothing measured yet');
    // The first traffic the owner ever sees is a backlog: probes go first (nothing is priced), the owner measures
    // its own fit from the jobs it serves, and the first lease is granted as soon as that fit exists.
    const since = Date.now();
    const ended = (await burst(t.owner, agent, bodies('model-a', 20, [10]))).endedAt;
    await sleep(300);
    const granted = (await t.decisions(since)).find((d) => d.kind === 'plan' && d.outcome === 'granted')?.at ?? null;
    const answered = granted === null ? null : ended.filter((e) => e < granted).length;
    // The owner's own requests: the ones it served itself (its analytics; lent ones are recorded as the helper's).
    const before = granted === null ? null : ownServedBefore(t.owner.dir!, 'owner', granted);
    const plan = (await t.decisions(since))
      .filter((d) => d.kind === 'plan')
      .map((d) => `${d.outcome}${d.reason ? `/${d.reason}` : ''}`);
    o.log(`cold-start: plan rows until the lease: ${plan.slice(0, plan.indexOf('granted') + 1).join(' ')}`);
    return {
      benchmark: 'lending-scenarios',
      scenario: 'cold-start',
      makespan_ms: null,
      p95_ms: null,
      optimum_ms: null,
      no_lending_ms: null,
      ratio_optimum: null,
      ratio_no_lending: null,
      requests_before_lease: before,
      answered_before_lease: answered,
      min_samples: minSamples,
      target: `owner requests before the first granted lease ≤ 2 × min_samples (${2 * minSamples})`,
      meets: before !== null && before <= 2 * minSamples,
    };
  } finally {
    agent.destroy();
    await scope.close();
  }
}

const MULTI = multiScenarios(false).map((s) => s.name);
const SCENARIOS = [
  'warm-idle',
  'switch-deep',
  'switch-shallow',
  'mixed-sizes',
  'helper-busy',
  'cold-start',
  'real-engines',
  ...MULTI,
  'trace',
];

export const lendingScenarios: Benchmark = {
  name: 'lending-scenarios',
  about: 'lending on real nodes, scenario by scenario: makespan against the exact optimum and against no lending',
  async run(o: BenchOptions): Promise<BenchResult> {
    const reps = o.quick ? 1 : 3;
    const K = o.quick ? 16 : 30;
    const rows: ScenarioRow[] = [];
    const burstScenarios: BurstScenario[] = [
      {
        name: 'warm-idle',
        ownerModel: 'model-a',
        tokens: Array(K).fill(10),
        helperHolds: null,
        target: { against: 'optimum', max: 1.1 },
        trio: { owner: { a: sim('model-a', 10) }, helper: { b: sim('model-b', 6) } },
        link: { owner: 'a', helper: 'b' },
        warm: warmBoth('model-a', 'model-b', [10], 3),
      },
      {
        name: 'switch-deep',
        ownerModel: 'model-a',
        tokens: Array(o.quick ? 30 : 40).fill(10),
        helperHolds: 'x',
        target: { against: 'no_lending', max: 0.999 },
        trio: {
          owner: { a: sim('model-a', 10) },
          helper: { x: sim('model-x', 8, 400), b: sim('model-b', 6, 400) },
          cluster: { offload_probe_idle: '5s' },
        },
        link: { owner: 'a', helper: 'b', flags: { load_if_unloaded: true, restore_after_borrow: true } },
        warm: warmSwitch('model-a', [10]),
      },
      {
        name: 'switch-shallow',
        ownerModel: 'model-a',
        tokens: Array(4).fill(10),
        helperHolds: 'x',
        target: { against: 'no_lending', max: 1.03 },
        trio: {
          owner: { a: sim('model-a', 10) },
          helper: { x: sim('model-x', 8, 400), b: sim('model-b', 6, 400) },
          cluster: { offload_probe_idle: '5s' },
        },
        link: { owner: 'a', helper: 'b', flags: { load_if_unloaded: true, restore_after_borrow: true } },
        warm: warmSwitch('model-a', [10]),
      },
      {
        name: 'mixed-sizes',
        ownerModel: 'model-a',
        tokens: mixedTokens(K),
        helperHolds: null,
        target: { against: 'optimum', max: 1.15 },
        trio: { owner: { a: sim('model-a', 8) }, helper: { b: sim('model-b', 5) } },
        link: { owner: 'a', helper: 'b' },
        warm: warmBoth('model-a', 'model-b', [4, 40, 12, 28, 20], 2),
      },
    ];
    const wanted = (name: string) => !o.scenarios?.length || o.scenarios.includes(name);
    const unknown = (o.scenarios ?? []).filter((n) => !SCENARIOS.includes(n));
    if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')} (known: ${SCENARIOS.join(', ')})`);
    for (const s of burstScenarios) if (wanted(s.name)) rows.push(await runBurstScenario(s, o, reps));
    if (wanted('helper-busy')) rows.push(await helperBusy(o, reps));
    if (wanted('cold-start')) rows.push(await coldStart(o));
    if (wanted('real-engines')) {
      rows.push(await realEngines(o, reps, o.quick ? 12 : 24, 'llama-node'));
      rows.push(await realEngines(o, reps, o.quick ? 12 : 24, 'llama-server'));
    }
    for (const m of multiScenarios(o.quick))
      if (wanted(m.name)) rows.push((await runMultiScenario(m, o, reps)) as ScenarioRow);
    const trace = wanted('trace') ? await runTrace(o) : null;
    const out = rows.length ? report(rows) : { tables: [], summary: [], json: [] };
    if (trace) {
      out.tables.push(...trace.tables);
      out.summary.push(...trace.summary);
      out.json!.push(...trace.json!);
    }
    return out;
  },
};

type RealEngine = 'llama-node' | 'llama-server';

/**
 * The model config of one side of real-engines. llama-server runs from PATH or the engines cache, one thread like the
 * built-in engine, without `--jinja`.
 */
export function realModel(engine: RealEngine, name: string, model: string): ModelConfigInput {
  if (engine === 'llama-node') return llama(name, model);
  return {
    name,
    backend: 'llama-server',
    model,
    capabilities: ['text'],
    contextsize: 512,
    parallel: 1,
    command:
      'llama-server --host ${HOST} --port ${PORT} -m ${MODEL} --alias ${ALIAS} -c ${CONTEXTSIZE} -np ${PARALLEL} --metrics --slots -t 1',
  };
}

/**
 * Extra body fields of the real-engines requests. llama-server parses every answer as UTF-8 text and fails with a 500
 * ("does not match the expected … format") when random weights emit byte tokens that do not form UTF-8, so its
 * requests ban the generated vocabulary's bytes 0x80-0xFF (logit_bias -100); and it stops at an end-of-turn token the
 * small model picks at once, so `ignore_eos` makes every job the 96 tokens the optimum prices. The built-in engine
 * needs neither.
 */
export function realExtra(engine: RealEngine): Record<string, unknown> {
  if (engine === 'llama-node') return { temperature: 0 };
  const vocab = buildTinyVocab();
  const logitBias: Record<string, number> = {};
  vocab.tokens.forEach((t, id) => {
    const m = /^<0x([0-9A-F]{2})>$/.exec(t);
    if (vocab.types[id] === TokenType.byte && m && Number.parseInt(m[1]!, 16) >= 0x80) logitBias[String(id)] = -100;
  });
  return { temperature: 0, logit_bias: logitBias, ignore_eos: true };
}

/** The row of a real-engines run that could not start: what is missing and the command that gets it. */
export function notRunRow(engine: RealEngine, why: string): ScenarioRow {
  return {
    benchmark: 'lending-scenarios',
    scenario: 'real-engines',
    engine,
    makespan_ms: null,
    p95_ms: null,
    optimum_ms: null,
    no_lending_ms: null,
    ratio_optimum: null,
    ratio_no_lending: null,
    target: `not run: ${why}`,
    meets: false,
    not_run: why,
  };
}

/** real-engines: two real llama.cpp engines of one kind, models of different sizes (generated GGUFs), the bigger one on the owner. */
async function realEngines(o: BenchOptions, reps: number, k: number, engine: RealEngine): Promise<ScenarioRow> {
  if (engine === 'llama-server') {
    const found = decideEngine('llama-server', locateEngine('llama-server'), null);
    if (!found.available) {
      o.log(`real-engines on llama-server: not run: ${found.reason}; run ${found.how_to_get}`);
      return notRunRow(engine, `${found.reason}: run ${found.how_to_get}`);
    }
    o.log(`real-engines on llama-server: ${found.path}`);
  }
  const scope = new BenchScope();
  const extra = realExtra(engine);
  try {
    const { big, small } = await ggufPair(scope);
    const s: BurstScenario = {
      name: 'real-engines',
      ownerModel: 'llama-a',
      tokens: Array(k).fill(96),
      helperHolds: null,
      target: { against: 'optimum', max: 1.15 },
      extra,
      costs: 'contended',
      // Both engines saturate a core each on this 2-core machine: niceness 10 keeps the nodes' relays responsive.
      trio: {
        owner: { a: realModel(engine, 'llama-a', big) },
        helper: { b: realModel(engine, 'llama-b', small) },
        backend: { engine_nice: 10 },
      },
      link: { owner: 'a', helper: 'b' },
      warm: async (t, agent) => {
        await sequential(
          t.owner,
          agent,
          bodies('llama-a', 4, [96]).map((b) => ({ ...b, ...extra })),
        );
        await sequential(
          t.helper,
          agent,
          bodies('llama-b', 4, [96]).map((b) => ({ ...b, ...extra })),
        );
      },
    };
    return { ...(await runBurstScenario(s, o, reps)), engine };
  } finally {
    await scope.close();
  }
}

export function report(rows: ScenarioRow[]): BenchResult {
  const ms = (v: unknown) => (typeof v === 'number' ? formatNumber(v, 0) : null);
  return {
    tables: [
      {
        title:
          'lending-scenarios: bursts to an owner on real nodes, with the link against without it and against the exact optimum',
        columns: [
          'scenario',
          'makespan ms',
          'p95 ms',
          'optimum ms',
          'no lending ms',
          '÷ optimum',
          '÷ no lending',
          'lent / burst',
          'target',
          'meets',
        ],
        rows: rows.map((r) => [
          r.engine ? `${r.scenario} (${r.engine})` : r.scenario,
          ms(r.makespan_ms),
          ms(r.p95_ms),
          r.optimum_ms === null && typeof r.lower_bound_ms === 'number'
            ? `≥ ${ms(r.lower_bound_ms)} (lower bound)`
            : ms(r.optimum_ms),
          ms(r.no_lending_ms),
          formatRatio(r.ratio_optimum),
          formatRatio(r.ratio_no_lending),
          typeof r.lent_per_burst === 'number'
            ? formatNumber(r.lent_per_burst, 1)
            : r.scenario === 'cold-start'
              ? `${r.requests_before_lease ?? '—'} own / ${r.answered_before_lease ?? '—'} answered before the lease`
              : null,
          r.target,
          r.not_run ? 'not run' : r.meets ? 'yes' : 'NO',
        ]),
        notes: [
          "optimum: the best split of the burst's jobs over owner and helper, from the per-job fits and load times the nodes measured themselves;",
          "the first 2 jobs stay in the owner's pipe (scheduling_backend_depth); the helper pays its load once; no lending = the same burst before the link existed.",
          "helper-busy: the helper's own model serves steady traffic and the link would switch it away (PRICE-7);",
          'multi-node rows: the optimum over every node the links allow (each job on its owner or a linked helper, bursts at their offsets);',
          ...rows
            .filter((r) => typeof r.about === 'string')
            .map(
              (r) =>
                `${r.scenario}: ${r.about}; best with one helper per owner ${ms(r.one_helper_each_ms) ?? '—'} ms; lent ${
                  Object.entries((r.lent_to ?? {}) as Record<string, number>)
                    .map(([k, n]) => `${k} ×${n}`)
                    .join(', ') || 'none'
                }.`,
            ),
          `helper-busy own p95: ${rows.find((r) => r.scenario === 'helper-busy')?.helper_own_p95_ms ? `${ms(rows.find((r) => r.scenario === 'helper-busy')!.helper_own_p95_ms)} ms with the link, ${ms(rows.find((r) => r.scenario === 'helper-busy')!.helper_own_p95_no_link_ms)} ms without` : '—'}.`,
        ],
      },
    ],
    summary: rows.map((r) => ({
      benchmark: 'lending-scenarios',
      measure: `${r.engine ? `${r.scenario} (${r.engine})` : r.scenario}: ${r.target}`,
      value: `${r.not_run ? 'not run' : r.meets ? 'meets' : 'MISSES'}${r.scenario === 'cold-start' ? ` (${r.requests_before_lease ?? '—'} requests)` : ''}`,
      ratio:
        r.scenario === 'cold-start'
          ? null
          : /optimum|lower bound/.test(r.target)
            ? r.ratio_optimum
            : r.ratio_no_lending,
      against:
        r.scenario === 'cold-start'
          ? '—'
          : r.target.includes('lower bound')
            ? 'lower bound'
            : r.target.includes('optimum')
              ? 'exact optimum'
              : 'no lending',
    })),
    json: rows,
  };
}

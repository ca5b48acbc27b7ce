/**
 * Network faults: master, owner and helper each on its own network host (`net-hosts`: a Linux network namespace with
 * its own address on one bridge, as root), a burst to the owner with requests lent to the helper, and a fault while
 * they are in flight — a partition without a reset, a frozen helper, a flapping link, a master restart, a slow link.
 * Each row counts what the clients got, what the engines ran (their seen rings, read inside each host), how each
 * unknown fate was resolved (`lent_fate` rows), and the worst client latency against the same burst without the fault.
 * The target: nothing lost; nothing run twice, except where neither the master nor the owner could reach the helper,
 * and there only what the helper itself reported as run twice (`started_twice`).
 */
import { Agent } from 'node:http';
import type { ModelConfigInput } from '../config';
import { markedChat, markers, postChat } from './faults-client';
import { alive, EngineWatch, FaultScope, rssMb } from './faults-cluster';
import { classify, countRuns, type FaultRow, faultRow, markerText } from './faults-count';
import { getJson } from './http-client';
import { bodies, sequential, TRIO_CLUSTER_TOKEN, Trio } from './lending-trio';
import { NetHosts, netnsSupport } from './net-hosts';
import { BENCH_CONSOLE_TOKEN, type CliProcess, type Launch, sleep, until } from './scope';
import type { BenchOptions } from './types';

const clusterAuth = { authorization: `Bearer ${TRIO_CLUSTER_TOKEN}` };
/** How long a client waits for its answer before it counts as lost. */
const CLIENT_TIMEOUT_MS = 90_000;
/** The master's request time-out in these scenarios: a cut of the master's link outlasts it. */
const MASTER_REQUEST_TIMEOUT = '4s';

const textModel = (name: string, tokenMs: number): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['text'],
  contextsize: 65_536,
  parallel: 1,
  sim: { load_time: '100ms', token_time: `${tokenMs}ms` },
});

/** A running network cluster and what a fault may do to it. */
interface NetCluster {
  hosts: NetHosts;
  scope: FaultScope;
  t: Trio;
  /** The master now (a restart replaces it). */
  master: CliProcess;
  o: BenchOptions;
}

interface NetFault {
  name: string;
  /** Neither the master nor the owner can reach the helper for a while: a request taken back may run twice. */
  isolatesHelper: boolean;
  /** Prompt padding, in characters (the slow link's large prompts). */
  padding?: number;
  /** Applies the fault, waits its time, heals it; says what it did. */
  apply(c: NetCluster): Promise<string>;
}

const span = (o: BenchOptions, quickMs: number, fullMs: number) => (o.quick ? quickMs : fullMs);

/** Drops every packet between two hosts for `ms`, then lets them through again; resolves with `ms`. */
async function cutFor(c: NetCluster, a: string, b: string, ms: number): Promise<number> {
  await c.hosts.cut(a, b);
  await sleep(ms);
  await c.hosts.mend(a, b);
  return ms;
}

const launchOn =
  (hosts: NetHosts, host: string): Launch =>
  (command, args, options) =>
    hosts.spawn(host, command, args, options);

export const NET_FAULTS: NetFault[] = [
  {
    name: 'net-master-helper-cut',
    isolatesHelper: false,
    async apply(c) {
      const ms = await cutFor(c, 'master', 'helper', span(c.o, 9_000, 20_000));
      return `packets between master and helper dropped both ways for ${ms / 1000} s (master's request time-out ${MASTER_REQUEST_TIMEOUT}); owner ↔ helper and owner ↔ master up`;
    },
  },
  {
    name: 'net-owner-master-cut',
    isolatesHelper: false,
    async apply(c) {
      const ms = await cutFor(c, 'owner', 'master', span(c.o, 6_000, 12_000));
      return `packets between owner and master dropped both ways for ${ms / 1000} s mid-burst`;
    },
  },
  {
    name: 'net-helper-frozen',
    isolatesHelper: true,
    async apply(c) {
      const ms = span(c.o, 10_000, 30_000);
      c.t.helper.proc.kill('SIGSTOP');
      await sleep(ms);
      c.t.helper.proc.kill('SIGCONT');
      return `the helper node frozen (SIGSTOP) for ${ms / 1000} s, then resumed; its engine kept running`;
    },
  },
  {
    name: 'net-helper-flapping',
    isolatesHelper: true,
    async apply(c) {
      const ms = span(c.o, 8_000, 16_000);
      const end = Date.now() + ms;
      let flaps = 0;
      while (Date.now() < end) {
        await Promise.all([c.hosts.cut('master', 'helper'), c.hosts.cut('owner', 'helper')]);
        await sleep(1_000);
        await Promise.all([c.hosts.mend('master', 'helper'), c.hosts.mend('owner', 'helper')]);
        await sleep(1_000);
        flaps++;
      }
      return `the helper's links to master and owner cut for 1 s and up for 1 s, ${flaps} times`;
    },
  },
  {
    name: 'net-master-restarted',
    isolatesHelper: false,
    async apply(c) {
      const old = c.master;
      const exited = new Promise((r) => old.proc.once('exit', r));
      old.proc.kill('SIGTERM');
      await exited;
      await sleep(1_000);
      c.master = await c.scope.restartNode(old, launchOn(c.hosts, 'master'));
      return 'the master stopped (SIGTERM) mid-lend and started again on its config and store after 1 s';
    },
  },
  {
    name: 'net-slow-link',
    isolatesHelper: false,
    padding: 40_000,
    async apply(c) {
      const ms = span(c.o, 8_000, 15_000);
      await c.hosts.limit('helper', '1mbit');
      await sleep(ms);
      await c.hosts.unlimit('helper');
      return `the helper's link limited to 1 Mbit/s both ways (tc tbf) for ${ms / 1000} s during a burst of 40 kB prompts`;
    },
  },
];

/** What the sim engine behind `port` on a network host saw, read from inside that host (it listens on its loopback). */
async function seenInside(hosts: NetHosts, host: string, port: number): Promise<unknown> {
  const script = `fetch('http://127.0.0.1:${port}/sim/seen').then((r) => r.text()).then((t) => process.stdout.write(t))`;
  return JSON.parse(await hosts.exec(host, process.execPath, ['-e', script]));
}

/** The helper's router runs a borrowed request now (so a fault hits work in flight). */
async function helperRunsBorrowed(helper: CliProcess): Promise<boolean> {
  const v = await getJson<{ models: { active: { borrowed: boolean }[] }[] }>(
    `${helper.url}/router/v1/node/held`,
    clusterAuth,
  );
  return v.models.some((m) => m.active.some((i) => i.borrowed));
}

/** One burst of marked requests to the owner; `during` runs once the helper runs one of them. */
async function markedBurst(
  c: NetCluster,
  agent: Agent,
  prefix: string,
  k: number,
  padding: number,
  during?: () => Promise<string>,
) {
  const next = markers(prefix);
  const sent = new Set<string>();
  const started = Date.now();
  const list = Array.from({ length: k }, () => {
    const m = next();
    sent.add(m);
    return markedChat(
      'model-a',
      m,
      40,
      false,
      padding ? { messages: [{ role: 'user', content: `${markerText(m)} ${'x'.repeat(padding)}` }] } : {},
    );
  });
  const answers = Promise.all(list.map((b) => postChat(c.t.owner.url, b, CLIENT_TIMEOUT_MS, agent)));
  let note = '';
  if (during) {
    await until(() => helperRunsBorrowed(c.t.helper), 'a lent request running at the helper', 30_000, 20);
    note = await during();
  }
  const got = await answers;
  return { sent, started, got, note };
}

async function runNetFault(o: BenchOptions, f: NetFault): Promise<FaultRow> {
  const missing = await netnsSupport();
  if (missing) throw new Error(missing);
  const hosts = await NetHosts.create(['master', 'owner', 'helper']);
  const scope = new FaultScope();
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  try {
    const t = await Trio.start(scope, {
      hosts,
      owner: { a: textModel('model-a', 10) },
      helper: { b: textModel('model-b', 6) },
      clusterOf: { master: { request_timeout: MASTER_REQUEST_TIMEOUT } },
    });
    await sequential(t.owner, agent, bodies('model-a', 4, [10]));
    await sequential(t.helper, agent, bodies('model-b', 4, [10]));
    await t.link('a', 'b');
    await sleep(500);
    const c: NetCluster = { hosts, scope, t, master: t.master, o };
    const k = o.quick ? 12 : 24;
    o.log(`${f.name}: cluster up on three network hosts; a burst of ${k} without the fault first`);
    const baseline = await markedBurst(c, agent, 'b', k, f.padding ?? 0);
    const baselineWorst = Math.max(...baseline.got.map((a) => a.ms));
    await t.settle();
    const watch = new EngineWatch({ master: t.master, owner: t.owner, helper: t.helper }, (node, port) =>
      seenInside(hosts, node, port),
    );
    await watch.refresh();
    const before = rssMb([t.master, t.owner, t.helper]);
    const burst = await markedBurst(c, agent, f.name.slice(4, 6), k, f.padding ?? 0, () => f.apply(c));
    o.log(`${f.name}: ${burst.note}`);
    const outcomes = burst.got.map(classify);
    // Every member healthy again before the rows are gathered (a restarted master polls its slaves anew).
    await until(
      async () => {
        const { nodes } = await getJson<{ nodes: { healthy: boolean }[] }>(
          `${c.master.url}/router/v1/console/cluster/nodes`,
          { authorization: `Bearer ${BENCH_CONSOLE_TOKEN}` },
        );
        return nodes.length === 3 && nodes.every((n) => n.healthy);
      },
      'the cluster healthy again',
      30_000,
      100,
    );
    // The helper's word on every request taken back from it arrives once it answers again (a notice every 2 s).
    const fateRows = async () =>
      (await t.decisions(burst.started).catch(() => [])).filter((r) => r.event === 'lent_fate');
    await until(
      async () => {
        const rows = await fateRows();
        const n = (reason: string) => rows.filter((r) => r.reason === reason).length;
        return n('taken_back') === n('dropped') + n('started_twice');
      },
      'every helper told what was taken back from it',
      30_000,
      250,
    ).catch(() => undefined);
    await watch.stop();
    const runs = countRuns(watch.seen(), burst.sent);
    const fates: Record<string, number> = {};
    for (const r of await fateRows()) fates[r.reason ?? '?'] = (fates[r.reason ?? '?'] ?? 0) + 1;
    const returned: Record<string, number> = {};
    for (const r of await t.decisions(burst.started))
      if (r.event === 'returned' || r.event === 'relay_refused')
        returned[`${r.event}:${r.reason}`] = (returned[`${r.event}:${r.reason}`] ?? 0) + 1;
    const allowed = f.isolatesHelper ? (fates.started_twice ?? 0) : 0;
    const worst = Math.max(...burst.got.map((a) => a.ms));
    for (const e of runs.examples) o.log(`${f.name}: ${e}`);
    const nodes = [c.master, t.owner, t.helper];
    const row = faultRow(
      f.name,
      outcomes,
      runs,
      { before, after: rssMb(nodes.filter(alive)) },
      {
        note: burst.note,
        fates,
        returned,
        run_twice_allowed: allowed,
        worst_ms: Math.round(worst),
        baseline_worst_ms: Math.round(baselineWorst),
        worst_ratio: Math.round((worst / baselineWorst) * 100) / 100,
      },
    );
    row.meets = row.lost === 0 && row.run_twice <= allowed;
    return row;
  } finally {
    agent.destroy();
    await scope.close();
    await hosts.destroy();
  }
}

export const netFaultScenarios = NET_FAULTS.map((f) => ({ name: f.name, run: (o: BenchOptions) => runNetFault(o, f) }));

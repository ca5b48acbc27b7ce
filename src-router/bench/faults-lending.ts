/**
 * Fault scenarios on a master + owner + helper cluster (Trio, real `routerdesk node` processes): `kill -9` of the
 * helper while requests are lent to it, `kill -9` of the master while requests are lent, and a slave killed while
 * clients stream through the master from it.
 */
import { Agent } from 'node:http';
import type { ModelConfigInput } from '../config';
import { markedChat, markers, postChat } from './faults-client';
import { alive, EngineWatch, FaultScope, lanesOf, rssMb, within } from './faults-cluster';
import { classify, countRuns, type FaultRow, faultRow, type Outcome } from './faults-count';
import { getJson } from './http-client';
import { bodies, sequential, TRIO_CLUSTER_TOKEN, Trio } from './lending-trio';
import { BENCH_CONSOLE_TOKEN, type CliProcess, sleep, until } from './scope';
import type { BenchOptions } from './types';

export const simModel = (
  name: string,
  tokenMs: number,
  o: { parallel?: number; loadMs?: number; maxQueue?: number } = {},
): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['text'],
  contextsize: 4096,
  parallel: o.parallel ?? 1,
  ...(o.maxQueue ? { max_queue: o.maxQueue } : {}),
  sim: { load_time: `${o.loadMs ?? 100}ms`, token_time: `${tokenMs}ms` },
});

/** How long a fault-suite client waits for its answer before it counts as a hang (lost). */
export const CLIENT_TIMEOUT_MS = 30_000;

const clusterAuth = { authorization: `Bearer ${TRIO_CLUSTER_TOKEN}` };

/** Requests the owner has lent right now (its held view). */
async function lentNow(owner: CliProcess): Promise<number> {
  const v = await getJson<{ models: { held: { state: string }[] }[] }>(`${owner.url}/router/v1/node/held`, clusterAuth);
  return v.models.reduce((n, m) => n + m.held.filter((i) => i.state === 'lent').length, 0);
}

/** A chat the node answers 200 after the fault (the node still serves). */
async function servesChat(node: CliProcess, model: string, stream = false): Promise<boolean> {
  const a = await postChat(node.url, markedChat(model, 'after', 4, stream), 15_000);
  return classify(a).kind === 'ok';
}

interface Lent {
  scope: FaultScope;
  t: Trio;
  watch: EngineWatch;
  agent: Agent;
}

/** A linked cluster (owner a → helper b), both fits measured, the link applied; its engines watched. */
async function lendingCluster(o: BenchOptions, name: string): Promise<Lent> {
  const scope = new FaultScope();
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  try {
    const t = await Trio.start(scope, { owner: { a: simModel('model-a', 10) }, helper: { b: simModel('model-b', 6) } });
    await sequential(t.owner, agent, bodies('model-a', 4, [10]));
    await sequential(t.helper, agent, bodies('model-b', 4, [10]));
    await t.link('a', 'b');
    await sleep(500);
    const watch = new EngineWatch({ master: t.master, owner: t.owner, helper: t.helper });
    await watch.refresh();
    o.log(`${name}: cluster up, link owner/a → helper/b applied`);
    return { scope, t, watch, agent };
  } catch (err) {
    agent.destroy();
    await scope.close();
    throw err;
  }
}

/**
 * A burst to the owner; as soon as the owner has lent requests, `kill` runs (once). Every client's answer, the
 * engines' rings, the nodes' memory before and after.
 */
async function burstWithKill(
  c: Lent,
  o: BenchOptions,
  name: string,
  k: number,
  kill: (lent: number) => Promise<void>,
): Promise<{ outcomes: Outcome[]; lentAtKill: number; sent: Set<string> }> {
  const next = markers(name.slice(0, 1));
  const sent = new Set<string>();
  c.watch.start();
  const list = Array.from({ length: k }, () => {
    const m = next();
    sent.add(m);
    return markedChat('model-a', m, 10);
  });
  const answers = Promise.all(list.map((b) => postChat(c.t.owner.url, b, CLIENT_TIMEOUT_MS, c.agent)));
  // Mid-lease: the owner has lent requests and the helper's engine is running one of them.
  let lentAtKill = 0;
  const helperEngine = c.watch.enginesOf('helper')[0]?.port;
  await within(
    10_000,
    async () => {
      lentAtKill = await lentNow(c.t.owner).catch(() => 0);
      if (lentAtKill === 0 || !helperEngine) return false;
      return (
        (await getJson<{ active: number }>(`http://127.0.0.1:${helperEngine}/sim/stats`).catch(() => ({ active: 0 })))
          .active > 0
      );
    },
    10,
  );
  await kill(lentAtKill);
  const outcomes = (await answers).map(classify);
  await c.watch.stop();
  return { outcomes, lentAtKill, sent };
}

export async function helperKilled(o: BenchOptions): Promise<FaultRow> {
  const c = await lendingCluster(o, 'helper-killed');
  try {
    const nodes = [c.t.master, c.t.owner, c.t.helper];
    const before = rssMb(nodes);
    const { outcomes, lentAtKill, sent } = await burstWithKill(
      c,
      o,
      'helper-killed',
      o.quick ? 20 : 30,
      async (lent) => {
        await c.watch.faultOn('helper', () => c.t.helper.proc.kill('SIGKILL'));
        o.log(`helper-killed: helper SIGKILLed with ${lent} requests lent to it`);
      },
    );
    const runs = countRuns(c.watch.seen(), sent);
    const healthy = await servesChat(c.t.owner, 'model-a');
    for (const e of runs.examples) o.log(`helper-killed: ${e}`);
    return faultRow(
      'helper-killed',
      outcomes,
      runs,
      { before, after: rssMb(nodes.filter(alive)) },
      {
        note: `helper SIGKILLed with ${lentAtKill} lent (its engine running one); its runs died with it and are not counted as runs`,
        lent_at_kill: lentAtKill,
        healthy_after: healthy,
        nodes_after: nodes.filter(alive).length,
      },
    );
  } finally {
    c.agent.destroy();
    await c.scope.close();
  }
}

export async function masterKilled(o: BenchOptions): Promise<FaultRow> {
  const c = await lendingCluster(o, 'master-killed');
  try {
    const nodes = [c.t.master, c.t.owner, c.t.helper];
    const before = rssMb(nodes);
    const { outcomes, lentAtKill, sent } = await burstWithKill(
      c,
      o,
      'master-killed',
      o.quick ? 20 : 30,
      async (lent) => {
        c.t.master.proc.kill('SIGKILL');
        o.log(`master-killed: master SIGKILLed with ${lent} requests lent`);
      },
    );
    const runs = countRuns(c.watch.seen(), sent);
    const healthy = (await servesChat(c.t.owner, 'model-a')) && (await servesChat(c.t.helper, 'model-b'));
    for (const e of runs.examples) o.log(`master-killed: ${e}`);
    return faultRow(
      'master-killed',
      outcomes,
      runs,
      { before, after: rssMb(nodes.filter(alive)) },
      {
        note: `master SIGKILLed with ${lentAtKill} lent (the helper's engine running one)`,
        lent_at_kill: lentAtKill,
        healthy_after: healthy,
        nodes_after: nodes.filter(alive).length,
      },
    );
  } finally {
    c.agent.destroy();
    await c.scope.close();
  }
}

/**
 * Both slaves hold the same model (replicas); clients stream through the master (round-robin); once the helper's
 * engine is streaming, the helper node is SIGKILLed. Streams it was sending break off with an in-band error event;
 * requests it had not started answering are retried on the other replica.
 */
export async function slaveKilledMidStream(o: BenchOptions): Promise<FaultRow> {
  const scope = new FaultScope();
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  try {
    const shared = { s: simModel('model-s', 25, { parallel: 4 }) };
    const t = await Trio.start(scope, { owner: shared, helper: shared });
    await until(
      async () => {
        const { models } = await getJson<{ models: { id: string; replicas: unknown[] }[] }>(
          `${t.master.url}/router/v1/console/cluster/models`,
          { authorization: `Bearer ${BENCH_CONSOLE_TOKEN}` },
        );
        return models.find((m) => m.id === 'model-s')?.replicas.length === 2;
      },
      'model-s on both slaves',
      20_000,
      100,
    );
    for (const n of [t.owner, t.helper]) await sequential(n, agent, bodies('model-s', 1, [2]));
    const watch = new EngineWatch({ master: t.master, owner: t.owner, helper: t.helper });
    await watch.refresh();
    o.log('slave-killed-mid-stream: cluster up, model-s on owner and helper');
    const nodes = [t.master, t.owner, t.helper];
    const before = rssMb(nodes);
    const next = markers('s');
    const sent = new Set<string>();
    watch.start();
    const k = o.quick ? 12 : 16;
    const answers = Promise.all(
      Array.from({ length: k }, () => {
        const m = next();
        sent.add(m);
        return postChat(t.master.url, markedChat('model-s', m, 40, true), CLIENT_TIMEOUT_MS, agent);
      }),
    );
    const port = watch.enginesOf('helper')[0]?.port;
    const streaming = await within(10_000, async () => {
      if (!port) return false;
      const s = await getJson<{ active: number }>(`http://127.0.0.1:${port}/sim/stats`).catch(() => ({ active: 0 }));
      return s.active >= 2;
    });
    await sleep(300); // some tokens of those streams have reached their clients
    const lanes = await lanesOf(t.helper).catch(() => []);
    await watch.faultOn('helper', () => t.helper.proc.kill('SIGKILL'));
    o.log(
      `slave-killed-mid-stream: helper SIGKILLed while its engine streamed (${lanes.reduce((n, l) => n + l.inflight, 0)} in flight there)`,
    );
    const outcomes = (await answers).map(classify);
    await watch.stop();
    const runs = countRuns(watch.seen(), sent);
    const healthy = await servesChat(t.master, 'model-s', true);
    return faultRow(
      'slave-killed-mid-stream',
      outcomes,
      runs,
      { before, after: rssMb(nodes.filter(alive)) },
      {
        note: `helper SIGKILLed mid-stream${streaming ? '' : ' (its engine never streamed: killed after 10 s)'}`,
        healthy_after: healthy,
        nodes_after: nodes.filter(alive).length,
      },
    );
  } finally {
    agent.destroy();
    await scope.close();
  }
}

/**
 * Fault scenarios on one node (and, for Redis, a small cluster): a flood of concurrent clients against a bounded
 * queue, an engine frozen with SIGSTOP, clients that stop reading their streams, Redis stopped and started under
 * traffic.
 */
import { Agent } from 'node:http';
import { markedChat, markers, postChat, StalledReader } from './faults-client';
import { EngineWatch, FaultScope, lanesOf, pidAlive, rssMb, within } from './faults-cluster';
import { classify, countRuns, type FaultRow, faultRow, markerOf, type Outcome } from './faults-count';
import { CLIENT_TIMEOUT_MS, simModel } from './faults-lending';
import { getJson } from './http-client';
import { bodies, sequential, Trio } from './lending-trio';
import { startRedis } from './redis';
import { BENCH_CONSOLE_TOKEN, type CliProcess, sleep, until } from './scope';
import type { BenchOptions } from './types';

const consoleHeaders = { authorization: `Bearer ${BENCH_CONSOLE_TOKEN}`, 'content-type': 'application/json' };

/** `clients` loops, each sending one request after the other until `until()` says stop. */
async function steadyTraffic(clients: number, until: () => boolean, send: () => Promise<Outcome>): Promise<Outcome[]> {
  const out: Outcome[] = [];
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (!until()) out.push(await send());
    }),
  );
  return out;
}

export async function queueFlood(o: BenchOptions): Promise<FaultRow> {
  const n = o.quick ? 400 : 1000;
  const maxQueue = o.quick ? 80 : 200;
  const scope = new FaultScope();
  try {
    const node = await scope.startNode({ flood: simModel('flood', 1, { maxQueue, loadMs: 50 }) });
    await sequential(node, new Agent(), bodies('flood', 2, [4]));
    const watch = new EngineWatch({ node });
    await watch.refresh();
    watch.start(500);
    o.log(`queue-flood: ${n} concurrent clients, max_queue ${maxQueue}`);
    const before = rssMb([node]);
    const next = markers('q');
    const sent = new Set<string>();
    // One connection per client (agent: false): a thousand clients, not a pool of sockets.
    const answers = await Promise.all(
      Array.from({ length: n }, () => {
        const m = next();
        sent.add(m);
        return postChat(node.url, markedChat('flood', m, 4), 60_000, false);
      }),
    );
    await watch.stop();
    const outcomes = answers.map(classify);
    const refused = answers.filter((a) => a.status === 429);
    const noRetryAfter = refused.filter((a) => !a.headers['retry-after']).length;
    const healthy = (await postChat(node.url, markedChat('flood', 'after', 2), 10_000)).status === 200;
    return faultRow(
      'queue-flood',
      outcomes,
      countRuns(watch.seen(), sent),
      { before, after: rssMb([node]) },
      {
        note: `${n} at once, max_queue ${maxQueue}: the rest get 429 queue_full`,
        max_queue: maxQueue,
        retry_after_missing: noRetryAfter,
        failures: noRetryAfter + outcomes.filter((x) => x.kind === 'unclear_error').length,
        healthy_after: healthy,
      },
    );
  } finally {
    await scope.close();
  }
}

/**
 * Steady traffic to one node; its engine is frozen with SIGSTOP. With backend.health_interval short, the node finds
 * it hung, kills it (requests in it get an error) and starts a new one; later requests are served.
 */
export async function engineFrozen(o: BenchOptions): Promise<FaultRow> {
  const scope = new FaultScope({
    backend: { health_interval: '250ms', health_timeout: '250ms' },
    cluster: { request_timeout: '12s' },
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let frozenPid: number | null = null;
  try {
    const node = await scope.startNode({ frozen: simModel('frozen', 10, { parallel: 2, loadMs: 50 }) });
    await sequential(node, agent, bodies('frozen', 2, [4]));
    const watch = new EngineWatch({ node });
    await watch.refresh();
    const before = rssMb([node]);
    const next = markers('f');
    const sent = new Set<string>();
    const durationMs = o.quick ? 5_000 : 7_000;
    const t0 = Date.now();
    watch.start();
    let restartedAt: number | null = null;
    const traffic = steadyTraffic(
      6,
      () => Date.now() - t0 > durationMs,
      async () => {
        const m = next();
        sent.add(m);
        return classify(await postChat(node.url, markedChat('frozen', m, 8), CLIENT_TIMEOUT_MS, agent));
      },
    );
    await sleep(1_500);
    const [lane] = await watch.faultOn(
      'node',
      (engines) => {
        frozenPid = engines[0]?.pid ?? null;
        if (frozenPid) process.kill(frozenPid, 'SIGSTOP');
      },
      { engines: watch.enginesOf('node')[0]?.pid ?? 'all', resume: true },
    );
    const frozenAt = Date.now();
    o.log(`engine-frozen: engine pid ${lane?.pid ?? '?'} stopped (SIGSTOP)`);
    await within(
      15_000,
      async () => {
        const l = (await lanesOf(node).catch(() => []))[0];
        if (l?.pid && l.pid !== frozenPid && l.state === 'ready') restartedAt = Date.now();
        return restartedAt !== null;
      },
      50,
    );
    const outcomes = await traffic;
    await watch.stop();
    const runs = countRuns(watch.seen(), sent);
    const healthy = (await postChat(node.url, markedChat('frozen', 'after', 2), 15_000)).status === 200;
    return faultRow(
      'engine-frozen',
      outcomes,
      runs,
      { before, after: rssMb([node]) },
      {
        note: restartedAt
          ? `engine SIGSTOPped; found hung and replaced after ${((restartedAt - frozenAt) / 1000).toFixed(1)} s`
          : 'engine SIGSTOPped; NOT replaced within 15 s',
        engine_replaced: restartedAt !== null,
        replaced_after_ms: restartedAt ? restartedAt - frozenAt : null,
        healthy_after: healthy,
        failures: outcomes.filter((x) => x.kind === 'unclear_error').length,
      },
    );
  } finally {
    // A stopped engine cannot stop: let it go on so the node's shutdown ends it.
    if (frozenPid && pidAlive(frozenPid)) process.kill(frozenPid, 'SIGCONT');
    agent.destroy();
    await scope.close();
  }
}

/**
 * `stalled` clients stream and never read (raw sockets, paused) while `others` keep sending requests. With
 * server.write_timeout 1 s, each stalled one is cut off (its engine request cancelled) and the others are all served.
 */
export async function stalledReaders(o: BenchOptions): Promise<FaultRow> {
  const stalledN = 50;
  const scope = new FaultScope({ server: { write_timeout: '1s' } });
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const readers: StalledReader[] = [];
  try {
    // Every streamed event names the model: a long name makes each event ~3 KB, so a stalled reader's socket buffers
    // (~4 MB on loopback) fill after ~1,300 events rather than ~20,000, and the scenario takes seconds, not a minute.
    const model = `chatty-${'x'.repeat(3_000)}`;
    const node = await scope.startNode({ chatty: simModel(model, 5, { parallel: 64, loadMs: 50 }) });
    await sequential(node, agent, bodies(model, 2, [4]));
    const watch = new EngineWatch({ node });
    await watch.refresh();
    watch.start(500);
    const before = rssMb([node]);
    const next = markers('r');
    const stalledMarks = new Set<string>();
    const sent = new Set<string>();
    for (let i = 0; i < stalledN; i++) {
      const m = next();
      stalledMarks.add(m);
      sent.add(m);
      // As fast as the engine can (sim_token_time 0) and without end: only a reader could finish it.
      readers.push(new StalledReader(node.url, markedChat(model, m, 5_000_000, true, { sim_token_time: 0 })));
    }
    await Promise.all(readers.map((r) => r.ready()));
    const stalledLogged = () => (node.output().match(/client_stalled/g) ?? []).length;
    const logged0 = stalledLogged();
    let stop = false;
    const t0 = Date.now();
    const traffic = steadyTraffic(
      8,
      () => stop,
      async () => {
        const m = next();
        sent.add(m);
        const stream = sent.size % 2 === 0;
        return classify(await postChat(node.url, markedChat(model, m, 8, stream), CLIENT_TIMEOUT_MS, agent));
      },
    );
    const allCut = await within(30_000, () => stalledLogged() - logged0 >= stalledN, 100);
    await sleep(500);
    stop = true;
    const others = await traffic;
    o.log(
      `stalled-readers: ${stalledLogged() - logged0} stalled clients cut off after ${((Date.now() - t0) / 1000).toFixed(1)} s; ${others.length} other requests meanwhile`,
    );
    const stalled = await Promise.all(readers.map((r) => r.resume(3_000)));
    // Their engine requests end too (cancelled): wait (bounded) for the engine to hold nothing more.
    const port = watch.enginesOf('node')[0]?.port;
    let engineActive = -1;
    await within(
      10_000,
      async () =>
        (engineActive = (
          await getJson<{ active: number }>(`http://127.0.0.1:${port}/sim/stats`).catch(() => ({ active: -1 }))
        ).active) === 0,
      100,
    );
    await watch.stop();
    const stalledOutcomes = stalled.map((a) => (a.stillOpen ? null : classify(a)));
    const cut = stalledOutcomes.filter((x) => x?.kind === 'cut').length;
    const notCut = stalledOutcomes.filter((x) => x === null).length;
    const seen = watch.seen();
    const stalledStates: Record<string, number> = {};
    for (const s of seen.flatMap((e) => e.entries))
      if (stalledMarks.has(markerOf(s.head) ?? '')) stalledStates[s.state] = (stalledStates[s.state] ?? 0) + 1;
    const healthy = (await postChat(node.url, markedChat(model, 'after', 2), 10_000)).status === 200;
    const othersNotOk = others.filter((x) => x.kind !== 'ok').length;
    // The row counts every client: the stalled ones are neither ok nor lost; they are `stalled_cut`.
    const outcomes: Outcome[] = [
      ...others,
      ...stalledOutcomes.filter((x): x is Outcome => x !== null && x.kind !== 'cut'),
    ];
    const row = faultRow(
      'stalled-readers',
      outcomes,
      countRuns(seen, sent),
      { before, after: rssMb([node]) },
      {
        note: `${stalledN} readers paused; write_timeout 1 s; ${others.length} others served meanwhile`,
        stalled: stalledN,
        stalled_cut: cut,
        stalled_not_cut: notCut,
        stalled_engine_states: stalledStates,
        engine_active_after: engineActive,
        stalled_cut_logged: stalledLogged() - logged0,
        all_cut_within_30s: allCut,
        others_sent: others.length,
        others_not_ok: othersNotOk,
        failures: notCut + othersNotOk,
        healthy_after: healthy,
      },
    );
    row.sent += cut + notCut;
    return row;
  } finally {
    for (const r of readers) r.destroy();
    agent.destroy();
    await scope.close();
  }
}

/**
 * A master and two slaves (model-s on both) whose keyspace is a real Redis; a routing strategy is published there.
 * Clients keep sending through the master while Redis is stopped and, a few seconds later, started again (empty).
 */
export async function redisRestart(o: BenchOptions): Promise<FaultRow> {
  let redisUrl = '';
  const scope = new FaultScope(() => ({ redis: { url: redisUrl }, routing: { poll_interval: '300ms' } }));
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  try {
    const redis = await startRedis(scope);
    redisUrl = redis.url;
    const shared = { s: simModel('model-s', 5, { parallel: 2 }) };
    const t = await Trio.start(scope, { owner: shared, helper: shared });
    const nodes: CliProcess[] = [t.master, t.owner, t.helper];
    for (const n of [t.owner, t.helper]) await sequential(n, agent, bodies('model-s', 1, [2]));
    const routing = async () => {
      const res = await fetch(`${t.master.url}/router/v1/console/runtime.routing`, {
        headers: consoleHeaders,
        signal: AbortSignal.timeout(3_000),
      });
      return (await res.json()) as { status?: { reporting: boolean; effective?: { strategy?: string } } };
    };
    const set = await fetch(`${t.master.url}/router/v1/console/runtime.setRouting`, {
      method: 'POST',
      headers: consoleHeaders,
      body: JSON.stringify({ strategy: 'least-request' }),
    });
    if (set.status !== 200) throw new Error(`redis-restart: setting the strategy: ${set.status} ${await set.text()}`);
    await until(
      async () => (await routing()).status?.effective?.strategy === 'least-request',
      'least-request in force',
      10_000,
      100,
    );
    const watch = new EngineWatch({ master: t.master, owner: t.owner, helper: t.helper });
    await watch.refresh();
    watch.start();
    o.log('redis-restart: cluster up on Redis, least-request in force');
    const before = rssMb(nodes);
    const next = markers('d');
    const sent = new Set<string>();
    const durationMs = o.quick ? 6_000 : 8_000;
    const t0 = Date.now();
    const traffic = steadyTraffic(
      8,
      () => Date.now() - t0 > durationMs,
      async () => {
        const m = next();
        sent.add(m);
        return classify(await postChat(t.master.url, markedChat('model-s', m, 6), CLIENT_TIMEOUT_MS, agent));
      },
    );
    await sleep(1_500);
    await redis.stop();
    const stoppedAt = Date.now();
    await sleep(1_000);
    const outage = await routing().catch(() => null);
    const probe = await fetch(`${t.master.url}/router/v1/console/runtime.setRouting`, {
      method: 'POST',
      headers: consoleHeaders,
      body: JSON.stringify({ strategy: 'round-robin' }),
    });
    const probeBody = (await probe.json().catch(() => ({}))) as { error?: { code?: string } };
    await sleep(1_500);
    await redis.start();
    o.log(
      `redis-restart: Redis down for ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s (setRouting meanwhile: ${probe.status} ${probeBody.error?.code ?? ''})`,
    );
    const restartedAt = Date.now();
    const reporting = await within(
      15_000,
      async () => (await routing().catch(() => null))?.status?.reporting === true,
      100,
    );
    const reportingAfterMs = reporting ? Date.now() - restartedAt : null;
    const outcomes = await traffic;
    await watch.stop();
    const healthy = (await postChat(t.master.url, markedChat('model-s', 'after', 2), 10_000)).status === 200;
    return faultRow(
      'redis-restart',
      outcomes,
      countRuns(watch.seen(), sent),
      { before, after: rssMb(nodes) },
      {
        note: `Redis stopped for ${((restartedAt - stoppedAt) / 1000).toFixed(1)} s under traffic, then started empty`,
        reporting_in_outage: outage?.status?.reporting ?? null,
        strategy_in_outage: outage?.status?.effective?.strategy ?? null,
        set_routing_in_outage: `${probe.status} ${probeBody.error?.code ?? ''}`.trim(),
        reporting_again_after_ms: reportingAfterMs,
        healthy_after: healthy && reporting,
        failures: outcomes.filter((x) => x.kind === 'unclear_error').length,
      },
    );
  } finally {
    agent.destroy();
    await scope.close();
  }
}

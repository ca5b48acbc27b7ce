/**
 * The replay core: recorded arrivals replayed through the lending code itself — the router queue (`ModelQueue`), the
 * owner side (`OwnerSide`: leases on the owner's clock, lending up to the slots, holds), the helper side
 * (`HelperSide`: returns, refusals, withdrawals), the pure planner (pricing, probes) with the coordinator's lease
 * bookkeeping, the cost fits — on a simulated clock (`SimClock`). Engines are replaced by their measured costs: each
 * job occupies its runtime lane for its service time, a switch for the model's mean measured load. Pure: no IO, no
 * wall clock, no sleeps; bounded by an event cap.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { LaneRestorer, Supervisor } from '../../backends';
import {
  type CostFit,
  expectedAnswerTokens,
  fitCost,
  fitFromAnalytics,
  loadCost,
  meanEstimatedTokens,
  predict,
  type TokenProfile,
  tokenProfile,
} from '../../costs';
import { ModelQueue, type QueueItem } from '../../queue';
import type { DecisionInput, LoadRow, RequestRow } from '../../store';
import { dropExpiredLeases, keepLiveLeases, type LiveLeases } from '../coordinator';
import { planRowToDecision, type ReturnedReason, relayRefusedRow } from '../decision-rows';
import { HelperSide } from '../helper-side';
import { lentCutoffAt } from '../holds';
import { OwnerSide } from '../owner-side';
import { plan } from '../planner';
import { type LeaseGrant, type ModelRef, type ModelState, type NodeState, refKey, type Trigger } from '../types';
import { idleAtStart, lastOwnRequestEnds } from './idle';
import { SimClock } from './sim-clock';
import type { ReplayedRequest, ReplayInput, ReplayModel, ReplayRequest } from './types';

export interface SimulateResult {
  requests: ReplayedRequest[];
  /** Every decision row the replayed lending wrote (the same builders as the nodes'). */
  decisions: DecisionInput[];
  loads: number;
  events: number;
  capped: boolean;
  unpriced: number;
}

const silent = {
  fatal() {},
  error() {},
  warn() {},
  info() {},
  debug() {},
  trace() {},
  silent() {},
  level: 'silent',
  child: () => silent,
} as unknown as FastifyBaseLogger;
/** Restores after borrowing are not replayed (HELPER-4): the restorer does nothing. */
const noRestorer = {
  remember() {},
  forget() {},
  quietFromNow() {},
  cancelAll() {},
  stop() {},
} as unknown as LaneRestorer;

interface Lane {
  loaded: string | null;
  busy: boolean;
  jobs: Job[];
}

interface Job {
  model: string;
  item: QueueItem;
  req: ReplayRequest;
  borrowed?: Borrowed;
}

interface Borrowed {
  item: QueueItem;
  helper: SimNode;
  model: string;
  owner: ModelRef;
  ownerItem: QueueItem;
  started: boolean;
  done: boolean;
  reason: ReturnedReason;
  cancelCutoff?: () => void;
}

interface SimNode {
  id: string;
  queues: Map<string, ModelQueue>;
  lanes: Map<string, Lane>;
  owner: OwnerSide;
  helper: HelperSide;
  /** Own requests that arrived and have not yet claimed the runtime nor ended (lent ones end with their answer). */
  pendingOwn: Set<string>;
  /** Own requests open, from arrival to their answer, a lent one included (PROBE-3, as `cluster/activity.ts`). */
  ownOpen: number;
  /** Own work last ended (the node's idleness starts here while `ownOpen` is 0). */
  lastOwnEnd: number;
  lastOwnRequestEnd: number | null;
}

export function simulate(input: ReplayInput, maxEvents: number): SimulateResult {
  const s = input.settings;
  const first = input.requests.reduce((m, r) => Math.min(m, r.arrivedAt), input.from);
  const clock = new SimClock(Math.min(input.from, first));
  const now = clock.now;
  const decisions: DecisionInput[] = [];
  const sink = { add: (row: DecisionInput) => void decisions.push(row) };
  const schedule = (fn: () => void, ms: number) => clock.after(() => step(fn), ms);
  const models = new Map(input.models.map((m) => [`${m.nodeId}/${m.model}`, m]));
  const modelOf = (node: string, model: string): ReplayModel =>
    models.get(`${node}/${model}`) ?? { nodeId: node, model, lane: 'text', runtimeLane: 'text', loadSamplesMs: [] };
  const enrolled = new Set(input.links.flatMap((l) => [refKey(l.owner), refKey(l.helper)]));
  const isOwner = (node: string, model: string) =>
    input.links.some((l) => l.owner.nodeId === node && l.owner.model === model);
  const leaseTtlMs = Math.max(3 * s.refreshIntervalMs, 5_000);

  // Measured costs: every recorded service time and load, for the engine stand-in (not the planner's fits).
  const costs = serviceCosts(input);
  const rows = new Map<string, RequestRow[]>();
  const loads = new Map<string, LoadRow[]>();
  for (const r of input.history) push(rows, `${r.nodeId}/${r.localId}`, r);
  for (const l of input.historyLoads) push(loads, `${l.nodeId}/${l.localId}`, l);
  const fitCache = new Map<string, { fit: CostFit | null; loadMs: number | null; profile: TokenProfile | null }>();

  const nodes = new Map<string, SimNode>();
  const nodeIds = new Set([
    ...input.models.map((m) => m.nodeId),
    ...input.requests.map((r) => r.node),
    ...input.links.flatMap((l) => [l.owner.nodeId, l.helper.nodeId]),
  ]);
  const ownEnds = lastOwnRequestEnds(input.history);
  for (const id of [...nodeIds].sort()) nodes.set(id, newNode(id));

  const live: LiveLeases = new Map();
  const started = new Set<QueueItem>();
  const relayed = new Set<QueueItem>();
  const borrowed = new Map<string, Borrowed>();
  const reqOf = new Map<QueueItem, ReplayRequest>();
  const replayed: ReplayedRequest[] = [];
  let loadCount = 0;
  let unpriced = 0;
  let decisionPending = false;
  let cancelWake: (() => void) | undefined;
  let outstanding = input.requests.length;

  function push<T>(m: Map<string, T[]>, k: string, v: T) {
    const a = m.get(k);
    if (a) a.push(v);
    else m.set(k, [v]);
  }

  function newNode(id: string): SimNode {
    const idle = idleAtStart(
      id,
      { from: input.from, history: input.history, requests: input.requests, samples: input.idleSamples },
      ownEnds,
    );
    const node: SimNode = {
      id,
      queues: new Map(),
      lanes: new Map(),
      pendingOwn: new Set(),
      ownOpen: 0,
      lastOwnEnd: idle.idleSince,
      lastOwnRequestEnd: idle.lastOwnRequestEnd,
      owner: undefined as unknown as OwnerSide,
      helper: undefined as unknown as HelperSide,
    };
    const lanes = input.lanesAtStart[id] ?? {};
    const laneOf = (lane: string): Lane => {
      let l = node.lanes.get(lane);
      if (!l) node.lanes.set(lane, (l = { loaded: lanes[lane] ?? null, busy: false, jobs: [] }));
      return l;
    };
    for (const m of input.models.filter((x) => x.nodeId === id)) laneOf(m.runtimeLane);
    for (const lane of Object.keys(lanes)) laneOf(lane);
    const supervisor = {
      adapter: (localId: string) => ({ lane: modelOf(id, localId).runtimeLane }),
      state: (localId: string) => (laneOf(modelOf(id, localId).runtimeLane).loaded === localId ? 'ready' : 'stopped'),
    } as unknown as Supervisor;
    node.owner = new OwnerSide({
      nodeId: id,
      master: {
        event: async () => null,
        relay: async () => ({ kind: 'unknown', message: 'replay' }),
        cutOff: async () => false,
        cancel: async () => {},
      },
      decisions: sink,
      log: silent,
      now,
      schedule,
      holdEnabled: s.holdEnabled,
      queueOf: (m) => node.queues.get(m),
      isOwner: (m) => isOwner(id, m),
    });
    node.helper = new HelperSide({
      nodeId: id,
      decisions: sink,
      log: silent,
      now,
      supervisor,
      restorer: noRestorer,
      queues: () => [...node.queues.values()],
      linkFor: (owner, m) =>
        input.links.find((l) => refKey(l.owner) === refKey(owner) && l.helper.nodeId === id && l.helper.model === m),
      ownPending: () => node.pendingOwn.size,
    });
    return node;
  }

  function queueOf(node: SimNode, model: string): ModelQueue {
    let q = node.queues.get(model);
    if (q) return q;
    const linked = enrolled.has(`${node.id}/${model}`);
    // A model in no link has no router queue (QUEUE-1): every request goes straight to its runtime lane.
    q = new ModelQueue(
      model,
      linked ? s.depth : Number.MAX_SAFE_INTEGER,
      (event) => {
        if (!linked) return;
        if (event === 'enqueued') ownerEvent(node, model, 'enqueued');
        else if (event === 'finished') ownerEvent(node, model, 'completed');
        else node.owner.dispatch(model);
      },
      now,
    );
    if (linked) q.holdPolicy = (item, firstStartedAt) => node.owner.holdSecond(model, item, firstStartedAt);
    node.queues.set(model, q);
    return q;
  }

  /** LEASE-2: an owner's queue event goes to the decider (one decision pending at a time: coalesced). */
  function ownerEvent(node: SimNode, model: string, trigger: Trigger) {
    if (!isOwner(node.id, model)) return;
    node.owner.dispatch(model);
    decideSoon(trigger);
  }

  function decideSoon(trigger: Trigger) {
    if (decisionPending) return;
    decisionPending = true;
    clock.after(() => step(() => decide(trigger)), s.decisionLatencyMs);
  }

  function costsOf(node: string, model: string) {
    const key = `${node}/${model}`;
    let c = fitCache.get(key);
    if (c) return c;
    const m = modelOf(node, model);
    const own = rows.get(key) ?? [];
    c = {
      fit: fitFromAnalytics(own, { now: now(), windowMs: s.sampleWindowMs, minSamples: s.minSamples, lane: m.lane }),
      loadMs: loadCost(loads.get(key) ?? []),
      profile:
        m.lane === 'text'
          ? tokenProfile(
              own
                .filter((r) => r.outcome === 'ok' && r.promptBytes && r.promptTokens)
                .map((r) => ({
                  bodyBytes: r.promptBytes!,
                  promptTokens: r.promptTokens!,
                  answerTokens: r.tokensGenerated ?? null,
                })),
              s.minSamples,
            )
          : null,
    };
    fitCache.set(key, c);
    return c;
  }

  /** A node as the planner sees it (LEASE-3), built as `LendingNode.state()` builds it from the same queues. */
  function stateOf(node: SimNode): NodeState {
    const t = now();
    const out: ModelState[] = [];
    for (const [model, q] of node.queues) {
      if (!enrolled.has(`${node.id}/${model}`)) continue;
      const m = modelOf(node.id, model);
      const lane = node.lanes.get(m.runtimeLane);
      const lendable = q.lendable();
      const c = costsOf(node.id, model);
      // As LendingNode prices held work: the expected answer (the measured mean capped by the request's size) for text.
      const workOf = (i: QueueItem) =>
        m.lane === 'image' ? i.work : (expectedAnswerTokens(c.profile, i.work || undefined) ?? i.work);
      out.push({
        model,
        lane: m.lane,
        runtimeLane: m.runtimeLane,
        loaded: lane?.loaded === model,
        held: lendable.length,
        heldWork: lendable.map(workOf),
        pinnedWork: q
          .view()
          .waiting.filter((i) => !i.borrowed && !lendable.includes(i))
          .map(workOf),
        active: q.activeCount,
        lentOut: q.lentCount,
        borrowedWaiting: q.borrowedWaiting(),
        fit: c.fit,
        loadMs: c.loadMs,
        // Model configs are not in the store: the context gate (LLM-2) is not replayed; every linked model is eligible.
        contextsize: m.lane === 'text' ? Number.MAX_SAFE_INTEGER : null,
        eligible: true,
        multimodal: false,
        meanHeldTokens:
          m.lane === 'text'
            ? meanEstimatedTokens(
                lendable.map((i) => ({ bodyBytes: i.bodyBytes, maxTokens: i.work || undefined })),
                c.profile,
                s.contextReserve,
              )
            : null,
      });
    }
    for (const [laneName, lane] of node.lanes) {
      if (!lane.loaded || out.some((m) => m.model === lane.loaded)) continue;
      const m = modelOf(node.id, lane.loaded);
      out.push({
        model: lane.loaded,
        lane: m.lane,
        runtimeLane: laneName,
        loaded: true,
        held: 0,
        heldWork: [],
        active: lane.jobs.filter((j) => j.model === lane.loaded).length,
        lentOut: 0,
        fit: null,
        loadMs: costsOf(node.id, lane.loaded).loadMs,
        contextsize: null,
        eligible: false,
        multimodal: false,
        meanHeldTokens: null,
      });
    }
    // As ActivityTracker answers: 0 while own work runs; a recorded idleness that starts later reads as busy until then.
    return {
      nodeId: node.id,
      reachable: true,
      acceptsBorrowed: node.helper.acceptsBorrowed(),
      ownIdleMs: node.ownOpen > 0 ? 0 : Math.max(0, t - node.lastOwnEnd),
      sinceOwnRequestMs:
        node.ownOpen > 0 ? 0 : node.lastOwnRequestEnd === null ? null : Math.max(0, t - node.lastOwnRequestEnd),
      lanes: Object.fromEntries([...node.lanes].map(([k, l]) => [k, l.loaded])),
      borrowedInFlight: node.helper.borrowedInFlight(),
      models: out,
    };
  }

  /** The master's decision (LEASE-3/4): the planner on every node's state; each owner with held work hears its answer. */
  function decide(trigger: Trigger) {
    decisionPending = false;
    const t = now();
    const states = [...nodes.values()].map(stateOf);
    dropExpiredLeases(live, t);
    const result = plan({
      now: t,
      trigger,
      links: input.links,
      nodes: states,
      live: [...live.values()],
      settings: { probeIdleMs: s.probeIdleMs, switchProbeFactor: 12, leaseTtlMs },
    });
    for (const row of result.rows) sink.add(planRowToDecision(row));
    for (const lease of result.leases) lease.helperContextsize = null;
    keepLiveLeases(live, result, t);
    for (const lease of result.leases) nodes.get(lease.owner.nodeId)?.owner.apply(lease.owner.model, lease);
    for (const o of result.noLease) nodes.get(o.nodeId)?.owner.apply(o.model, null);
    cancelWake?.();
    cancelWake =
      result.wakeAt === null ? undefined : clock.at(result.wakeAt + 5, () => step(() => decideSoon('probe_due')));
  }

  function tick() {
    if (outstanding <= 0) return;
    decideSoon('tick');
    clock.after(() => step(tick), s.refreshIntervalMs);
  }

  function arrive(req: ReplayRequest) {
    const node = nodes.get(req.node)!;
    node.helper.onOwnArrival();
    node.pendingOwn.add(req.id);
    node.ownOpen++;
    const item: QueueItem = {
      id: req.id,
      arrivedAt: now(),
      stream: req.stream,
      bodyBytes: req.bodyBytes,
      work: req.work,
      borrowed: false,
      returned: false,
      state: 'queued',
    };
    reqOf.set(item, req);
    void queueOf(node, req.model)
      .enqueue(item)
      .catch(() => {});
  }

  /** After every event: new engine slots go to their lane, lent requests to their helper, hand-backs to their owner. */
  function settle() {
    for (let pass = 0; pass < 10_000; pass++) {
      let changed = false;
      for (const node of nodes.values()) {
        for (const [model, q] of node.queues) {
          const v = q.view();
          for (const item of v.active)
            if (!started.has(item)) {
              started.add(item);
              submit(node, model, item);
              changed = true;
            }
          for (const item of v.lent)
            if (!relayed.has(item)) {
              relayed.add(item);
              relay(node, model, item);
              changed = true;
            }
        }
      }
      for (const b of borrowed.values()) {
        if (b.done || b.started || b.item.state === 'active') continue;
        const q = b.helper.queues.get(b.model)!;
        if (q.view().waiting.includes(b.item)) continue;
        handBack(b);
        changed = true;
      }
      if (!changed) return;
    }
  }

  function step(fn: () => void) {
    fn();
    settle();
  }

  function relay(owner: SimNode, model: string, item: QueueItem) {
    const lease = owner.owner.lease(model);
    const ownerRef: ModelRef = { nodeId: owner.id, model };
    const back = (reason: ReturnedReason) => {
      const q = owner.queues.get(model)!;
      q.lentDone(item);
      owner.owner.returned(model, item, reason);
      relayed.delete(item);
      void q.requeue(item).catch(() => {});
    };
    const liveLease = lease ? live.get(refKey(lease.helper)) : undefined;
    if (!lease || !liveLease || liveLease.expiresAt <= now() || refKey(liveLease.owner) !== refKey(ownerRef)) {
      sink.add(
        relayRefusedRow({
          at: now(),
          linkId: lease?.linkId ?? null,
          owner: ownerRef,
          helper: lease?.helper ?? null,
          requestId: item.id,
          reason: 'no_live_lease',
        }),
      );
      return back('no_live_lease');
    }
    const helper = nodes.get(lease.helper.nodeId);
    if (!helper) return back('helper_unreachable');
    // The relay's hops (owner → master → helper) take loopback time.
    clock.after(() => step(() => arrive()), s.relayMs);
    const arrive = () => {
      const refusal = helper.helper.checkArrival(lease.helper.model, ownerRef, item.id);
      if (refusal) return back(refusal);
      const bItem: QueueItem = {
        ...item,
        arrivedAt: now(),
        borrowed: true,
        returned: false,
        state: 'queued',
        startedAt: undefined,
        owner: refKey(ownerRef),
      };
      reqOf.set(bItem, reqOf.get(item)!);
      const b: Borrowed = {
        item: bItem,
        helper,
        model: lease.helper.model,
        owner: ownerRef,
        ownerItem: item,
        started: false,
        done: false,
        reason: 'own_work_arrived',
      };
      borrowed.set(item.id, b);
      helper.helper.admitted(bItem, b.model, ownerRef);
      void queueOf(helper, b.model)
        .enqueue(bItem)
        .catch(() => {});
      // HOLD-4: a helper that has not started it by 3 × (switch + job) + 30 s is cut off (on its word that it has not).
      const cutoffAt = lentCutoffAt(item.startedAt ?? now(), lease as LeaseGrant);
      if (cutoffAt !== null) {
        b.cancelCutoff = clock.at(cutoffAt, () =>
          step(() => {
            if (b.done || b.started) return;
            if (helper.helper.withdraw([item.id])[item.id] === 'withdrawn') b.reason = 'cut_off';
          }),
        );
      }
    };
  }

  /** A borrowed request came back unstarted: the owner logs it and runs it itself (never lent again). */
  function handBack(b: Borrowed) {
    b.done = true;
    b.cancelCutoff?.();
    b.helper.helper.borrowedDone(b.item, b.model, b.owner);
    const owner = nodes.get(b.owner.nodeId)!;
    const q = owner.queues.get(b.owner.model)!;
    q.lentDone(b.ownerItem);
    owner.owner.returned(b.owner.model, b.ownerItem, b.reason);
    relayed.delete(b.ownerItem);
    void q.requeue(b.ownerItem).catch(() => {});
  }

  function submit(node: SimNode, model: string, item: QueueItem) {
    const m = modelOf(node.id, model);
    const lane =
      node.lanes.get(m.runtimeLane) ??
      (node.lanes.set(m.runtimeLane, { loaded: null, busy: false, jobs: [] }), node.lanes.get(m.runtimeLane)!);
    const b = item.borrowed ? borrowed.get(item.id) : undefined;
    if (b) b.helper.helper.claimSignal(item);
    lane.jobs.push({ model, item, req: reqOf.get(item)!, borrowed: b });
    runLane(node, lane);
  }

  function runLane(node: SimNode, lane: Lane) {
    if (lane.busy) return;
    const job = lane.jobs[0];
    if (!job) return;
    if (job.borrowed && !job.borrowed.helper.helper.claimed(job.item)) {
      // Taken back or withdrawn before it claimed the runtime (HELPER-2): its slot goes to the next one.
      lane.jobs.shift();
      node.queues.get(job.model)!.finished(job.item);
      handBack(job.borrowed);
      return runLane(node, lane);
    }
    if (job.borrowed) job.borrowed.started = true;
    else node.pendingOwn.delete(job.req.id);
    lane.busy = true;
    const run = () => {
      const key = `${node.id}/${job.model}`;
      const ms = serviceOf(job.req, key);
      const overhead =
        key === job.req.recorded.ranOn && job.req.overheadMs !== undefined
          ? job.req.overheadMs
          : (modelOf(node.id, job.model).jobOverheadMs ?? 0);
      clock.after(() => step(() => finish(node, lane, job, ms)), ms + overhead);
    };
    if (lane.loaded === job.model) return run();
    const ms = costs.loadMs(`${node.id}/${job.model}`);
    lane.loaded = null;
    clock.after(
      () =>
        step(() => {
          lane.loaded = job.model;
          loadCount++;
          push(loads, `${node.id}/${job.model}`, {
            finishedAt: now(),
            nodeId: node.id,
            model: job.model,
            localId: job.model,
            backend: 'replay',
            lane: modelOf(node.id, job.model).runtimeLane,
            durationMs: ms,
            success: true,
          });
          fitCache.delete(`${node.id}/${job.model}`);
          run();
        }),
      ms,
    );
  }

  function serviceOf(req: ReplayRequest, key: string): number {
    const ms = costs.service(req, key);
    if (ms === null) {
      unpriced++;
      return 0;
    }
    return ms;
  }

  function finish(node: SimNode, lane: Lane, job: Job, serviceMs: number) {
    lane.busy = false;
    lane.jobs.shift();
    const t = now();
    const key = `${node.id}/${job.model}`;
    push(rows, key, {
      finishedAt: t,
      nodeId: node.id,
      model: job.model,
      localId: job.model,
      backend: 'replay',
      endpoint: job.req.endpoint,
      streamed: job.req.stream,
      promptBytes: job.req.bodyBytes,
      promptTokens: job.req.promptTokens,
      tokensGenerated: job.req.endpoint === 'image' ? null : job.req.work,
      queueWaitMs: 0,
      durationMs: t - job.item.arrivedAt,
      serviceMs,
      serviceSource: 'derived',
      outcome: 'ok',
    });
    fitCache.delete(key);
    const q = node.queues.get(job.model)!;
    const done = (at: number) => {
      outstanding--;
      replayed.push({
        id: job.req.id,
        arrivedAt: job.req.arrivedAt,
        finishedAt: at,
        waitMs: Math.max(0, at - job.req.arrivedAt - serviceMs),
        ranOn: key,
      });
    };
    if (job.borrowed) {
      const b = job.borrowed;
      b.done = true;
      b.cancelCutoff?.();
      q.finished(job.item);
      node.helper.borrowedDone(job.item, job.model, b.owner);
      const owner = nodes.get(b.owner.nodeId)!;
      // The answer comes back the same way (helper → master → owner).
      clock.after(
        () =>
          step(() => {
            owner.queues.get(b.owner.model)!.lentDone(b.ownerItem);
            ownDone(owner, job.req.id, now());
            done(now());
            ownerEvent(owner, b.owner.model, 'borrowed_completed');
          }),
        s.relayMs,
      );
    } else {
      ownDone(node, job.req.id, t);
      done(t);
      q.finished(job.item);
    }
    runLane(node, lane);
  }

  /** An own request answered, here or by a helper: the owner's own work ends with it (PROBE-3, PRICE-7). */
  function ownDone(node: SimNode, id: string, t: number) {
    node.pendingOwn.delete(id);
    node.ownOpen--;
    if (node.ownOpen === 0) node.lastOwnEnd = t;
    node.lastOwnRequestEnd = t;
  }

  // Every linked model has its router queue from the start (LendingNode.applyLinks).
  for (const l of input.links)
    for (const r of [l.owner, l.helper]) {
      const n = nodes.get(r.nodeId);
      if (n) queueOf(n, r.model);
    }
  const ordered = [...input.requests].sort((a, b) => a.arrivedAt - b.arrivedAt || (a.id < b.id ? -1 : 1));
  for (const r of ordered) clock.at(r.arrivedAt, () => step(() => arrive(r)));
  if (ordered.length && input.links.length) clock.at(ordered[0].arrivedAt, () => step(tick));
  const run = clock.run(maxEvents);
  return { requests: replayed, decisions, loads: loadCount, events: run.events, capped: run.capped, unpriced };
}

/**
 * The engine stand-in's costs, from what was measured: a request's own service time where it ran; elsewhere the
 * model's fit over every recorded sample of it (any work priced: a constant fit prices every size at its mean);
 * else the request's measured time scaled by the two models' mean service times. Loads cost the model's mean load.
 */
function serviceCosts(input: ReplayInput) {
  const samples = new Map<string, { work: number; durationMs: number }[]>();
  const add = (k: string, work: number, ms: number) => {
    const a = samples.get(k) ?? [];
    a.push({ work, durationMs: ms });
    samples.set(k, a);
  };
  for (const r of input.history)
    if (typeof r.serviceMs === 'number' && r.outcome === 'ok')
      add(`${r.nodeId}/${r.localId}`, r.tokensGenerated ?? 0, r.serviceMs);
  for (const r of input.requests) for (const [k, ms] of Object.entries(r.serviceMs)) add(k, r.work, ms);
  const fits = new Map<string, { fit: CostFit | null; mean: number | null }>();
  for (const [k, xs] of samples)
    fits.set(k, { fit: fitCost(xs, 1), mean: xs.reduce((a, x) => a + x.durationMs, 0) / xs.length });
  const loadMean = new Map(
    input.models.map((m) => [
      `${m.nodeId}/${m.model}`,
      m.loadSamplesMs.length ? m.loadSamplesMs.reduce((a, b) => a + b, 0) / m.loadSamplesMs.length : 0,
    ]),
  );
  return {
    service(req: ReplayRequest, key: string): number | null {
      if (req.serviceMs[key] !== undefined) return req.serviceMs[key];
      const f = fits.get(key);
      const fit = f?.fit ?? null;
      const p = fit?.kind === 'constant' ? fit.meanMs : predict(fit, req.work);
      if (p !== null) return p;
      const [otherKey, otherMs] = Object.entries(req.serviceMs)[0] ?? [];
      const otherMean = otherKey ? fits.get(otherKey)?.mean : null;
      if (otherMs !== undefined && f?.mean && otherMean) return otherMs * (f.mean / otherMean);
      return otherMs ?? f?.mean ?? null;
    },
    loadMs: (key: string) => loadMean.get(key) ?? 0,
  };
}

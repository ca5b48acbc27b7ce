/**
 * From the stores of a cluster's nodes to a replay's input and the recorded outcome (pure). Each store holds the
 * rows its node wrote: the requests it received (a lent one is recorded by its owner under the helper's name, with no
 * service time of its own), the borrowed jobs it ran for others, its loads and its decision rows.
 */
import type { ReplayOutcomeWire } from '../../contract/replay';
import { requestWork, serviceSampleMs } from '../../costs';
import type { DecisionRow, ReplaySource, RequestRow } from '../../store';
import type { LinkSpec } from '../types';
import { measuredTimings } from './measured-timings';
import { burstsOf, lendingCounts, outcomeOf, type TimedRequest } from './summary';
import type { IdleSample, ReplayInput, ReplayModel, ReplayRequest, ReplaySettings } from './types';

export interface RecordedCluster {
  input: ReplayInput;
  recorded: ReplayOutcomeWire;
  bursts: Map<string, number>;
  nodes: string[];
}

const arrival = (r: RequestRow) => r.finishedAt - r.durationMs;
/** How long a job held its lane beyond the engine's own report (its derived time less the engine's), where it has both. */
function jobOverheadOf(r: RequestRow): number | null {
  if (r.serviceSource !== 'engine' || typeof r.serviceMs !== 'number' || typeof r.derivedServiceMs !== 'number')
    return null;
  return Math.max(0, r.derivedServiceMs - r.serviceMs);
}
/** Whether two rows name the same request: unknown (undefined) when either has no ID (rows from before IDs). */
const sameRequest = (a: string | null | undefined, b: string | null | undefined): boolean | undefined =>
  a && b ? a === b : undefined;
const laneOfRow = (r: RequestRow): 'image' | 'text' => (r.endpoint === 'image' ? 'image' : 'text');

export function linksOfSources(sources: readonly ReplaySource[]): LinkSpec[] {
  const out = new Map<string, LinkSpec>();
  for (const s of sources) {
    for (const l of s.links) {
      out.set(l.id, {
        id: l.id,
        lane: l.lane,
        owner: { nodeId: l.ownerNode, model: l.ownerModel },
        helper: { nodeId: l.helperNode, model: l.helperModel },
        loadIfUnloaded: l.loadIfUnloaded,
        restoreAfterBorrow: l.restoreAfterBorrow,
      });
    }
  }
  return [...out.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
}

export function recordedCluster(
  sources: readonly ReplaySource[],
  o: { from: number; to: number; links: LinkSpec[]; settings: ReplaySettings },
): RecordedCluster {
  const byNode = new Map<string, ReplaySource>();
  for (const s of sources) if (s.nodeId) byNode.set(s.nodeId, s);
  // Borrowed jobs a helper ran, by helper node/model, not yet matched to the owner's lent request.
  const borrowedPool = new Map<string, RequestRow[]>();
  const requests: ReplayRequest[] = [];
  const timed: TimedRequest[] = [];
  let seq = 0;

  // 1. Lent requests, from the owners' stores: the owner's row (under the helper's name) and its `lent` row.
  const lentRows = new Map<string, DecisionRow[]>();
  // By request ID (rows that have one): a lent row by `node|id`, a helper's job by `node/model|id`.
  const lentById = new Map<string, DecisionRow>();
  const jobById = new Map<string, RequestRow>();
  for (const [node, s] of byNode) {
    const lent = s.decisions
      .filter((d) => d.kind === 'dispatch' && d.event === 'lent' && d.nodeId === node)
      .sort((a, b) => a.at - b.at);
    lentRows.set(node, lent);
    for (const d of lent) if (d.requestId) lentById.set(`${node}|${d.requestId}`, d);
    for (const r of s.requests)
      if (r.nodeId === node && r.serviceSource !== null && r.serviceSource !== undefined) {
        const k = `${r.nodeId}/${r.localId}`;
        const pool = borrowedPool.get(k) ?? [];
        pool.push(r);
        borrowedPool.set(k, pool);
        if (r.requestId) jobById.set(`${k}|${r.requestId}`, r);
      }
  }
  const usedLocal = new Set<RequestRow>();
  const usedLent = new Set<DecisionRow>();
  const lentArrivals: { node: string; row: RequestRow; ownerModel: string; lent: DecisionRow }[] = [];
  for (const [node, s] of byNode) {
    for (const r of s.requests) {
      if (r.nodeId === node || r.outcome !== 'ok') continue;
      // Its own `lent` row: the same request ID; rows without one (older stores), the same helper within its time.
      const forHelper = (d: DecisionRow | undefined) =>
        d !== undefined && !usedLent.has(d) && d.helperNode === r.nodeId && d.helperModel === r.localId;
      const byId = r.requestId ? lentById.get(`${node}|${r.requestId}`) : undefined;
      const lent = forHelper(byId)
        ? byId
        : lentRows
            .get(node)!
            .find(
              (d) =>
                forHelper(d) &&
                (sameRequest(d.requestId, r.requestId) ?? (d.at >= arrival(r) - 5 && d.at <= r.finishedAt)),
            );
      if (!lent || !lent.ownerModel) continue; // forwarded to another node: its own store has it
      usedLent.add(lent);
      lentArrivals.push({ node, row: r, ownerModel: lent.ownerModel, lent });
    }
  }
  // 2. Match each lent request with the helper's job: the same request ID (a borrowed job keeps its owner's); rows
  // without one (older stores), the same helper model, finished inside it, nearest its end.
  const matched = new Map<RequestRow, RequestRow>();
  for (const a of lentArrivals.sort((x, y) => x.row.finishedAt - y.row.finishedAt)) {
    const key = `${a.row.nodeId}/${a.row.localId}`;
    const byId = a.row.requestId ? jobById.get(`${key}|${a.row.requestId}`) : undefined;
    let best = byId && !usedLocal.has(byId) ? byId : undefined;
    if (!best)
      for (const h of borrowedPool.get(key) ?? []) {
        if (
          usedLocal.has(h) ||
          sameRequest(h.requestId, a.row.requestId) === false ||
          h.finishedAt > a.row.finishedAt + 5 ||
          h.finishedAt < arrival(a.row)
        )
          continue;
        if (!best || h.finishedAt > best.finishedAt) best = h;
      }
    if (best) {
      usedLocal.add(best);
      matched.set(a.row, best);
    }
  }
  /** `job`: the row of the job that ran it (the helper's for a lent request), whose service time it takes. */
  const push = (node: string, model: string, r: RequestRow, ranOn: string, job: RequestRow | undefined) => {
    const serviceMs = job ? serviceSampleMs(job) : null;
    const id = `${node}#${seq++}`;
    const lane = laneOfRow(r);
    const waitMs = Math.max(0, r.durationMs - (serviceMs ?? r.durationMs - r.queueWaitMs));
    const overheadMs = job ? jobOverheadOf(job) : null;
    requests.push({
      id,
      node,
      model,
      endpoint: r.endpoint,
      arrivedAt: arrival(r),
      work: requestWork(r, lane) ?? 0,
      stream: r.streamed,
      bodyBytes: r.promptBytes ?? 0,
      promptTokens: r.promptTokens ?? null,
      serviceMs: serviceMs === null ? {} : { [ranOn]: serviceMs },
      recorded: { finishedAt: r.finishedAt, waitMs, ranOn },
      ...(overheadMs === null ? {} : { overheadMs }),
    });
    timed.push({ id, arrivedAt: arrival(r), finishedAt: r.finishedAt, waitMs });
  };
  for (const a of lentArrivals) {
    const h = matched.get(a.row);
    push(a.node, a.ownerModel, a.row, `${a.row.nodeId}/${a.row.localId}`, h);
  }
  // 3. Every other request a node served itself is its own arrival.
  for (const [node, s] of byNode) {
    for (const r of s.requests) {
      if (r.nodeId !== node || usedLocal.has(r) || r.outcome !== 'ok' || arrival(r) < o.from || arrival(r) > o.to)
        continue;
      push(node, r.localId, r, `${node}/${r.localId}`, r);
    }
  }
  const inRange = requests.filter((r) => r.arrivedAt >= o.from && r.arrivedAt <= o.to);
  const ids = new Set(inRange.map((r) => r.id));
  const timedIn = timed.filter((t) => ids.has(t.id));

  // Models: linked ones, and every one that served or loaded.
  const models = new Map<string, ReplayModel>();
  const model = (nodeId: string, m: string, lane?: 'image' | 'text') => {
    const k = `${nodeId}/${m}`;
    let x = models.get(k);
    if (!x)
      models.set(k, (x = { nodeId, model: m, lane: lane ?? 'text', runtimeLane: lane ?? 'text', loadSamplesMs: [] }));
    return x;
  };
  for (const l of o.links) {
    model(l.owner.nodeId, l.owner.model, l.lane);
    model(l.helper.nodeId, l.helper.model, l.lane);
  }
  for (const r of inRange) model(r.node, r.model, r.endpoint === 'image' ? 'image' : 'text');
  const lanesAtStart: Record<string, Record<string, string | null>> = {};
  let loadsInRange = 0;
  for (const [node, s] of byNode) {
    for (const l of s.loads) {
      if (l.nodeId !== node) continue;
      const m = model(node, l.localId);
      m.runtimeLane = l.lane;
      if (l.success) m.loadSamplesMs.push(l.durationMs);
      if (l.finishedAt < o.from && l.success) (lanesAtStart[node] ??= {})[l.lane] = l.localId;
      if (l.finishedAt >= o.from && l.finishedAt <= o.to && l.success) loadsInRange++;
    }
  }
  for (const [node, s] of byNode) {
    const gaps = new Map<string, number[]>();
    for (const r of [...s.history, ...s.requests]) {
      const gap = r.nodeId === node ? jobOverheadOf(r) : null;
      if (gap === null) continue;
      const xs = gaps.get(r.localId) ?? [];
      xs.push(gap);
      gaps.set(r.localId, xs);
    }
    for (const [m, xs] of gaps) model(node, m).jobOverheadMs = xs.reduce((a, b) => a + b, 0) / xs.length;
  }
  const history = [...byNode].flatMap(([node, s]) => s.history.filter((r) => r.nodeId === node));
  const historyLoads = [...byNode].flatMap(([node, s]) =>
    s.loads.filter((l) => l.nodeId === node && l.finishedAt < o.from),
  );
  const decisions = [...byNode.values()].flatMap((s) => s.decisions);
  const bursts = burstsOf(timedIn);
  // The decision latency and relay the record had, where it tells (else the settings' loopback values).
  const trips = lentArrivals.flatMap((a) =>
    matched.has(a.row) ? [{ ownerRow: a.row, lent: a.lent, helperJob: matched.get(a.row)! }] : [],
  );
  const timings = measuredTimings(decisions, trips);
  const settings = {
    ...o.settings,
    decisionLatencyMs: timings.decisionLatencyMs ?? o.settings.decisionLatencyMs,
    relayMs: timings.relayMs ?? o.settings.relayMs,
  };
  return {
    input: {
      from: o.from,
      to: o.to,
      requests: inRange,
      history,
      historyLoads,
      models: [...models.values()],
      lanesAtStart,
      links: o.links,
      settings,
      idleSamples: idleSamplesOf(decisions),
    },
    recorded: outcomeOf(timedIn, bursts, lendingCounts(decisions), loadsInRange),
    bursts,
    nodes: [...byNode.keys()].sort(),
  };
}

/** The helpers' own-work idleness the master measured at each plan row (PROBE-3), for the replay's idle start. */
function idleSamplesOf(decisions: readonly DecisionRow[]): IdleSample[] {
  return decisions
    .filter((d) => d.kind === 'plan' && d.helperNode !== null && typeof d.helperIdleMs === 'number')
    .map((d) => ({ nodeId: d.helperNode!, at: d.at, idleMs: d.helperIdleMs! }));
}

import type {
  ActiveNodeWire,
  ClusterNodeView,
  HeldItemWire,
  HeldNodeWire,
  LendingViewWire,
} from '../../../src-router/contract';
import { DASH, formatClockMs, formatMillis, orDash, type PillTone, shortHash } from '../format';
import { type SyncPill, settingsSync } from '../lending/lending-view';

/**
 * The Nodes page (UI-2), pure: each node of the cluster with its health, build and whether it runs the master's
 * settings (from `cluster/nodes` and the Lending view), its active requests — every model's, linked or not: model,
 * lane, started, streamed or not, and the owner a borrowed one was lent from — and its held requests marked `queued`,
 * `held` or `lent` with the first-arrival time (kept across returns, QUEUE-5). A request at a backend is listed
 * under active requests only, never as held. Tested in renderer-nodes-view.test.ts.
 */

export type HeldMark = 'queued' | 'held' | 'lent';

const MARK_TONE: Record<HeldMark, PillTone> = { queued: 'idle', held: 'busy', lent: 'ok' };

export const MARK_HINT: Record<HeldMark, string> = {
  queued: 'waiting for a free backend slot',
  held: 'kept on purpose for a faster helper',
  lent: 'lent to a helper; this node keeps the client connection',
};

export interface RequestView {
  key: string;
  id: string;
  /** First 8 characters of the request ID. */
  shortId: string;
  model: string;
  /** `queued` / `held` / `lent` for held requests; `active` at the backend. */
  state: HeldMark | 'active';
  tone: PillTone;
  firstArrival: string;
  firstArrivalTitle: string;
  /** Time since first arrival. */
  age: string;
  /** `borrowed` (another owner's request), `returned` (came back from a helper), `stream`. */
  tags: string[];
  /** Place among the waiting requests (`—`: lent, or an older node that does not say). */
  position: string;
  /** Predicted start at the engine / finish (here, or at the helper for a lent one): `in 2.1 s`, `due`, or `—`. */
  predictedStart: string;
  predictedStartTitle: string;
  predictedFinish: string;
  predictedFinishTitle: string;
  /** A lent request's helper, `node/model`; `—` otherwise. */
  helper: string;
}

/** A predicted time relative to now: `in 2.1 s`, `due` once it passed; `—` when not priced or not reported (the title says which). */
export function predictedIn(at: string | null | undefined, now: number): { text: string; title: string } {
  if (at === undefined) return { text: DASH, title: 'not reported by this node' };
  const t = at === null ? NaN : Date.parse(at);
  if (Number.isNaN(t)) return { text: DASH, title: 'not predicted: no cost fit for this work yet' };
  return { text: t <= now ? 'due' : `in ${formatMillis(t - now)}`, title: `${formatClockMs(t)} (${at})` };
}

/** One request at a backend of the node (UI-2). */
export interface ActiveView {
  key: string;
  id: string;
  shortId: string;
  /** Local ID on the node; `clusterId` when clients name it otherwise. */
  model: string;
  modelTitle: string;
  lane: string;
  started: string;
  startedTitle: string;
  /** Time since it started. */
  age: string;
  streamed: 'streamed' | 'not streamed';
  /** `node/model` of the owner a borrowed request was lent from; `—` for the node's own. */
  lentFrom: string;
  /** `backend` (straight), `router queue` (an enrolled model's), `static route`, or `—` when an older node did not say. */
  via: string;
}

const VIA_LABEL = { backend: 'backend', router_queue: 'router queue', static_route: 'static route' } as const;

export interface NodeCardView {
  nodeId: string;
  role: string;
  local: boolean;
  url: string;
  health: SyncPill;
  lastSeen: string;
  lastError: string | null;
  /** What of the node's models the master did not take, and why. */
  warnings: string[];
  build: string;
  settings: SyncPill;
  settingsHash: string;
  settingsHashTitle: string;
  models: string;
  active: ActiveView[];
  /** Why the active requests are not all shown (not read, or an older node that lists only its queues' ones). */
  activeNote: string | null;
  held: RequestView[];
  /** `2 queued · 1 lent`, or null with nothing held. */
  heldSummary: string | null;
  /** Enrolled models (owner or helper in a link): only these have router queues. */
  enrolled: string[];
  /** Why the held requests are not shown (the node's queues could not be read, or the Lending view is missing). */
  heldNote: string | null;
}

const byArrival = (a: RequestView, b: RequestView) =>
  a.firstArrivalTitle < b.firstArrivalTitle ? -1 : a.firstArrivalTitle > b.firstArrivalTitle ? 1 : a.id < b.id ? -1 : 1;

function requestView(item: HeldItemWire, model: string, now: number, asActive: boolean): RequestView {
  const t = Date.parse(item.firstArrival);
  const state = asActive ? 'active' : (item.state as HeldMark);
  const start = predictedIn(state === 'lent' ? null : item.predictedStart, now);
  const finish = predictedIn(item.predictedFinish, now);
  return {
    key: `${model}:${item.id}`,
    id: item.id,
    shortId: item.id.slice(0, 8),
    model,
    state,
    tone: state === 'active' ? 'ok' : MARK_TONE[state],
    firstArrival: Number.isNaN(t) ? DASH : formatClockMs(t),
    firstArrivalTitle: item.firstArrival,
    age: Number.isNaN(t) ? DASH : formatMillis(Math.max(0, now - t)),
    tags: [item.borrowed && 'borrowed', item.returned && 'returned', item.stream && 'stream'].filter(
      (x): x is string => typeof x === 'string',
    ),
    position: typeof item.position === 'number' ? String(item.position) : DASH,
    predictedStart: start.text,
    predictedStartTitle:
      state === 'lent' && item.predictedFinish !== undefined ? 'lent: it started at the helper' : start.title,
    predictedFinish: finish.text,
    predictedFinishTitle: finish.title,
    helper: item.helper ?? DASH,
  };
}

const byStarted = (a: ActiveView, b: ActiveView) =>
  a.startedTitle < b.startedTitle ? -1 : a.startedTitle > b.startedTitle ? 1 : a.id < b.id ? -1 : 1;

function timeOf(iso: string, now: number) {
  const t = Date.parse(iso);
  return {
    at: Number.isNaN(t) ? DASH : formatClockMs(t),
    age: Number.isNaN(t) ? DASH : formatMillis(Math.max(0, now - t)),
  };
}

/**
 * The active requests of one node: from its active list (every model's); an older node without one lists only its
 * router queues' requests at the engine, with no lane or owner (`—`).
 */
export function activeRows(
  active: ActiveNodeWire | undefined,
  held: HeldNodeWire | undefined,
  now: number,
): ActiveView[] {
  if (active && !active.error) {
    return active.requests
      .map((r) => {
        const t = timeOf(r.started, now);
        return {
          key: `${r.model}:${r.id}`,
          id: r.id,
          shortId: r.id.slice(0, 8),
          model: r.model,
          modelTitle: r.clusterId === r.model ? r.model : `${r.model} (clients: ${r.clusterId})`,
          lane: orDash(r.lane),
          started: t.at,
          startedTitle: r.started,
          age: t.age,
          streamed: r.stream ? ('streamed' as const) : ('not streamed' as const),
          lentFrom: r.lentFrom ? `${r.lentFrom.nodeId}/${r.lentFrom.model}` : DASH,
          via: VIA_LABEL[r.via],
        };
      })
      .sort(byStarted);
  }
  return requestRows(held, now).active.map((r) => ({
    key: r.key,
    id: r.id,
    shortId: r.shortId,
    model: r.model,
    modelTitle: r.model,
    lane: DASH,
    started: r.firstArrival,
    startedTitle: r.firstArrivalTitle,
    age: r.age,
    streamed: r.tags.includes('stream') ? 'streamed' : 'not streamed',
    lentFrom: r.tags.includes('borrowed') ? 'another owner' : DASH,
    via: DASH,
  }));
}

/** Active and held requests of one node's queues: anything at a backend goes under active, whichever list sent it. */
export function requestRows(
  held: HeldNodeWire | undefined,
  now: number,
): { active: RequestView[]; held: RequestView[] } {
  const active: RequestView[] = [];
  const waiting: RequestView[] = [];
  for (const m of held?.models ?? []) {
    for (const item of [...m.active, ...m.held]) {
      if (item.state === 'active') active.push(requestView(item, m.model, now, true));
      else waiting.push(requestView(item, m.model, now, false));
    }
  }
  return { active: active.sort(byArrival), held: waiting.sort(byArrival) };
}

export function heldSummary(held: readonly RequestView[]): string | null {
  if (held.length === 0) return null;
  return (['queued', 'held', 'lent'] as const)
    .map((mark) => [mark, held.filter((r) => r.state === mark).length] as const)
    .filter(([, n]) => n > 0)
    .map(([mark, n]) => `${n} ${mark}`)
    .join(' · ');
}

function health(n: ClusterNodeView): SyncPill {
  if (n.local) return { label: 'this node', tone: 'ok' };
  return n.healthy ? { label: 'healthy', tone: 'ok' } : { label: 'unreachable', tone: 'bad' };
}

/** One card per node of `cluster/nodes`, in its order (this node first). `lending` null: not read yet or failed. */
export function nodeCards(
  nodes: readonly ClusterNodeView[],
  lending: LendingViewWire | null,
  now: number,
): NodeCardView[] {
  const reference = lending?.nodes[0]?.nodeId ?? null;
  return nodes.map((n) => {
    const inLending = lending?.nodes.find((x) => x.nodeId === n.nodeId);
    const heldNode = lending?.held.find((h) => h.nodeId === n.nodeId);
    const activeNode = lending?.active?.find((a) => a.nodeId === n.nodeId);
    const rows = requestRows(heldNode, now);
    const settings = inLending
      ? settingsSync(inLending, inLending.nodeId === reference)
      : { label: 'not reported', tone: 'idle' as const };
    return {
      nodeId: n.nodeId,
      role: n.role,
      local: n.local,
      url: n.url ?? 'this node',
      health: health(n),
      lastSeen: n.lastSeen ? formatClockMs(Date.parse(n.lastSeen)) : DASH,
      lastError: n.lastError,
      warnings: n.warnings ?? [],
      build: orDash(n.version),
      settings,
      settingsHash: shortHash(n.settingsHash, 16),
      settingsHashTitle: n.settingsHash ?? 'not reported',
      models: String(n.models),
      active: activeRows(activeNode, heldNode, now),
      activeNote: !lending
        ? null
        : activeNode?.error
          ? `Active requests not read: ${activeNode.error}; listing only linked models' requests.`
          : !activeNode
            ? "This node does not list its active requests: only linked models' requests are shown."
            : null,
      held: rows.held,
      heldSummary: heldSummary(rows.held),
      enrolled: (heldNode?.models ?? []).map((m) => m.model),
      heldNote: !lending
        ? 'Held requests not read yet.'
        : heldNode?.error
          ? `Held requests not read: ${heldNode.error}`
          : !heldNode
            ? 'This node is not in the Lending view.'
            : null,
    };
  });
}

export const NO_ACTIVE = 'No request at a backend.';
export const NO_HELD = 'Nothing held: no request is waiting in the router or lent.';
export const NOT_ENROLLED =
  'No model of this node is in a link: requests go straight to the backend (listed under active requests) and none is held.';

/**
 * The lending core's vocabulary (LINK, QUEUE, LEASE, PRICE, PROBE, HOLD, LOG in requirements.md).
 * The planner is a pure function of a PlanInput (a snapshot of every node, the links and a clock reading);
 * the owner, helper and coordinator do the IO around it.
 */
import type { CostFit } from '../costs/fit';

/** Lending lanes: image links and LLM (text) links are separate, each with its own cost model (LINK-2). */
export type LendingLane = 'image' | 'text';

/** A model config on a node. `model` is the config's local ID on that node. */
export interface ModelRef {
  nodeId: string;
  model: string;
}

export const refKey = (r: ModelRef) => `${r.nodeId}/${r.model}`;

/** One-way link: the owner lends held work to the helper (LINK-1, LINK-4). */
export interface LinkSpec {
  id: string;
  lane: LendingLane;
  owner: ModelRef;
  helper: ModelRef;
  /** The helper may load the linked model (displacing what it holds) to take lent work. */
  loadIfUnloaded: boolean;
  /** The helper reloads what it held before after the borrowing run (HELPER-4). */
  restoreAfterBorrow: boolean;
}

/** What made the master decide (LOG-2). */
export type Trigger = 'enqueued' | 'completed' | 'borrowed_completed' | 'probe_due' | 'tick';

/**
 * A model's measured cost per job (PRICE-2), fitted by the node from its own analytics.
 * `scaled`: varying work, duration = interceptMs + slopeMsPerWork × work.
 * `constant`: every sample did the same work: meanMs prices exactly that work; any other work is unpriced.
 * Defined in `costs/fit.ts` (costs sits above lending in the import order) and re-exported here unchanged.
 */
export type { CostFit };

/** One model config on one node, as the master sees it at decision time. */
export interface ModelState {
  model: string;
  lane: LendingLane;
  /** Loaded in its runtime lane right now. */
  loaded: boolean;
  /** Held requests in the router: the only lendable ones (QUEUE-2). */
  held: number;
  /** Work measure of each held request, oldest first (tokens for text, pixels×steps×count for images). */
  heldWork: number[];
  /** Requests at the engine now. */
  active: number;
  /** Requests of this owner currently lent out to helpers. */
  lentOut: number;
  /** Borrowed requests waiting in this (helper) model's router queue, not yet at its engine (PRICE-1 occupancy). */
  borrowedWaiting?: number;
  /** The node's own fit for this model, or null before min_samples (PRICE-2). */
  fit: CostFit | null;
  /** Mean measured successful load time (PRICE-4), null when never loaded. */
  loadMs: number | null;
  /** Context window in tokens (text), null when not stated. */
  contextsize: number | null;
  /** LLM-1: serves one request at a time and states a context window (always true for images). */
  eligible: boolean;
  multimodal: boolean;
  /**
   * LLM-2/3: conservative estimated size in tokens of the mean held request; before a token profile exists, the
   * safe upper bound (body bytes + answer room, PROBE-2); null when nothing is held.
   */
  meanHeldTokens: number | null;
  /**
   * Key in NodeState.lanes of the runtime this model loads into, when it differs from `lane`
   * (e.g. kobold mode's one shared process). Absent: `lane`.
   */
  runtimeLane?: string;
  /**
   * Work of held requests that stay with the owner whatever happens: streams (LLM-4) and requests handed back
   * (HELPER-2). They count in the owner's backlog and drain time but are never lent; not part of `held`/`heldWork`.
   */
  pinnedWork?: number[];
}

export interface NodeState {
  nodeId: string;
  /** Answered the master's poll just now. */
  reachable: boolean;
  /** False while the node has own work queued or waiting (HELPER-1). */
  acceptsBorrowed: boolean;
  /** Time since the node last had own work, own loads and restores included; borrowed work does not count (PROBE-3). */
  ownIdleMs: number;
  /** Time since the node last finished serving its own request, null when never (PRICE-7). */
  sinceOwnRequestMs: number | null;
  /** What each runtime lane holds now (local IDs), e.g. {text: 'llama-a', image: null}. */
  lanes: Record<string, string | null>;
  /** Borrowed jobs on this node now (at the engine or waiting for it). */
  borrowedInFlight: number;
  models: ModelState[];
}

/** A live lease as the master last granted it, keyed by the helper it claims. */
export interface LiveLease {
  owner: ModelRef;
  helper: ModelRef;
  slots: number;
  probe: boolean;
  expiresAt: number;
}

export interface PlanSettings {
  /** cluster.offload_probe_idle (PROBE-1). */
  probeIdleMs: number;
  /** Probe idle multiplier when the helper must switch models (PROBE-1: 12). */
  switchProbeFactor: number;
  /** Lifetime of a lease, timed by the owner on its own clock (LEASE-6). */
  leaseTtlMs: number;
}

export interface PlanInput {
  now: number;
  trigger: Trigger;
  links: LinkSpec[];
  nodes: NodeState[];
  /** Leases still live from earlier decisions (a helper serves one owner at a time: helper_claimed). */
  live: LiveLease[];
  settings: PlanSettings;
}

export type SkipReason =
  | 'owner_unpriced'
  | 'switch_unpriced'
  | 'service_unpriced'
  | 'cost_rejected'
  | 'outranked'
  | 'helper_not_accepting'
  | 'helper_claimed'
  | 'load_forbidden'
  | 'context_too_small'
  | 'restore_unpriced'
  | 'helper_recently_busy'
  | 'helper_unreachable'
  | 'owner_ineligible'
  | 'helper_ineligible';

/** One plan row: one owner–helper pair of one decision (LOG-2). */
export interface PlanRow {
  at: number;
  trigger: Trigger;
  linkId: string;
  owner: ModelRef;
  helper: ModelRef;
  /** The owner's lendable held requests. */
  held: number;
  /** What the owner drains alone: held + pinned held (streams, returned) + requests at its engine. */
  backlog: number;
  ownerDrainMs: number | null;
  helperSwitchMs: number | null;
  helperServiceMs: number | null;
  serviceSource: 'helper' | 'owner_fallback' | null;
  /** PRICE-1: work already at the helper's engine (or queued there as borrowed) before a lent job, ms; null when unpriced. */
  helperBusyMs: number | null;
  helperIdleMs: number;
  /** The owner's predicted time for the priced job (the oldest held request), null when unpriced. */
  ownerJobMs: number | null;
  /** PRICE-5: loading the displaced model back (0 when nothing is displaced), null when unmeasured. */
  helperRestoreMs: number | null;
  /** PROBE-4: when this pair's probe waits only for the helper's idleness, the time it becomes due; else null. */
  probeDueAt: number | null;
  outcome: 'granted' | 'probe' | 'skipped';
  /** Why a pair was skipped; for a probe, why the cost rule did not choose it (waiting for idleness: see probeDueAt). */
  reason: SkipReason | null;
  slots: number;
}

/** A lease the master answers an owner with (LEASE-4). */
export interface LeaseGrant {
  linkId: string;
  owner: ModelRef;
  /** The helper's node and its own model ID: lent requests are rewritten to it (LEASE-5). */
  helper: ModelRef;
  slots: 1 | 2;
  ttlMs: number;
  probe: boolean;
  /** Predicted per-job times (null when unmeasured): the owner uses them for HOLD-1..4. */
  ownerJobMs: number | null;
  helperJobMs: number | null;
  helperSwitchMs: number | null;
  /**
   * Both per-job speeds are measured (the owner's own fit and the helper's own fit, not the owner fallback) and
   * the lease is not a probe: only such leases may hold a request (HOLD-2) or cut a lent one off (HOLD-4).
   */
  measured: boolean;
  /** The helper's context window (text): a withdrawn request that does not fit runs on the owner (LLM-2). */
  helperContextsize?: number | null;
  /** The helper model has vision: only then may a request with image input be lent to it (LLM-1). */
  helperMultimodal?: boolean;
  /**
   * The helper node's URL as the master reaches it (null when the helper is the master): an owner whose relay broke
   * after sending withdraws the request there before it runs it itself (never run twice).
   */
  helperUrl?: string | null;
}

export interface PlanResult {
  /** One per owner model that gets a lease. */
  leases: LeaseGrant[];
  /** Owners with held work that get no lease this time (they stop lending). */
  noLease: ModelRef[];
  rows: PlanRow[];
  /** PROBE-4: when a probe waits only for a helper's idleness, decide again at this time (else null). */
  wakeAt: number | null;
}

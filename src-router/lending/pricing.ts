/**
 * Pricing one owner–helper pair (PRICE-1..7, LEASE-9). Pure: numbers in, numbers out; null means unpriced.
 */
import { predict } from '../costs/fit';
import { findModel, runtimeLaneOf } from './snapshot';
import type { CostFit, ModelState, NodeState } from './types';

export interface PairPrice {
  /**
   * Work of the priced job: the oldest held request. Interpretation ("the helper needs to hand back the first
   * lent job"): held requests leave the queue in arrival order, so the first lent job is the oldest held one.
   */
  work: number | null;
  /** The owner's predicted time for that job (LEASE-9's per-job comparison). */
  ownerJobMs: number | null;
  /** PRICE-1: the owner draining its backlog alone. */
  ownerDrainMs: number | null;
  /** The helper must load the linked model (it is not the model its runtime lane holds). */
  mustSwitch: boolean;
  /** Local ID the load would push out, null when the lane is empty or no load is needed. */
  displaced: string | null;
  /** Loading the linked model: 0 when loaded, the helper's measured load (PRICE-4) otherwise, null when never measured. */
  helperSwitchMs: number | null;
  /** PRICE-5: loading the displaced model again; 0 when nothing is displaced, null when unmeasured (PRICE-6). */
  helperRestoreMs: number | null;
  /** The helper's predicted time for the priced job (its own fit, else the owner's: PRICE-3). */
  helperServiceMs: number | null;
  serviceSource: 'helper' | 'owner_fallback' | null;
  /** Jobs already at the helper's engine or waiting for it as borrowed work: the lent job starts after them. */
  helperBusyJobs: number;
  /** PRICE-1: those jobs' predicted time (each priced as the helper's job); null when the job is unpriced. */
  helperBusyMs: number | null;
  /** PRICE-1/5: switch + work already at the helper + first job + the displaced model's reload; null when any part is unpriced. */
  helperCostMs: number | null;
}

/**
 * PRICE-1: the owner's time to drain its backlog alone: every held request (lendable and pinned) priced with
 * its own fit, plus the requests already at its engine. Interpretation: the engine's requests carry no work
 * measure in the snapshot, so each counts as the mean of the held jobs' predictions. Null when the fit cannot
 * price every held request (a constant fit meeting another size: "a request of a different size stays unpriced").
 */
export function ownerDrainMs(owner: ModelState): number | null {
  const jobs = [...owner.heldWork, ...(owner.pinnedWork ?? [])];
  if (!owner.fit || jobs.length === 0) return null;
  let sum = 0;
  for (const w of jobs) {
    const ms = predict(owner.fit, w);
    if (ms === null) return null;
    sum += ms;
  }
  return sum + Math.max(0, owner.active) * (sum / jobs.length);
}

/**
 * PRICE-3: the helper's own fit when it has one ("switches to its own as soon as it has one"), else the owner's
 * fit for the same work. Interpretation: a helper whose own fit cannot price the work (a constant fit for
 * another size) has a fit of its own, so it is unpriced for that work rather than falling back.
 */
export function servicePrice(
  helperFit: CostFit | null,
  ownerFit: CostFit | null,
  work: number | null,
): { ms: number | null; source: 'helper' | 'owner_fallback' | null } {
  if (helperFit) return { ms: work === null ? null : predict(helperFit, work), source: 'helper' };
  if (ownerFit) return { ms: work === null ? null : predict(ownerFit, work), source: 'owner_fallback' };
  return { ms: null, source: null };
}

/** What the helper's runtime lane holds, and whether the linked model must be loaded into it. */
export function helperSwitch(node: NodeState, helper: ModelState): { mustSwitch: boolean; displaced: string | null } {
  const holds = node.lanes[runtimeLaneOf(helper)] ?? null;
  if (helper.loaded || holds === helper.model) return { mustSwitch: false, displaced: null };
  return { mustSwitch: true, displaced: holds };
}

/**
 * PRICE-5/6: the displaced model's measured load. Interpretation: priced whether or not the link restores after
 * borrowing, because the seed prices "getting its own model back" either way: by the restore (HELPER-4) or by
 * "its own next request [paying] the switch cost again". A displaced model missing from the snapshot is unmeasured.
 */
export function restoreMs(node: NodeState, displaced: string | null): number | null {
  if (displaced === null) return 0;
  return findModel(node, displaced)?.loadMs ?? null;
}

/**
 * PRICE-1: how many jobs the helper's runtime must finish before a lent job can start there: every request at its
 * engine now (its own, borrowed ones, or the displaced model's, which a switch waits to drain) and borrowed
 * requests already waiting in its router queue for the helper model. Interpretation: the snapshot carries no work
 * measure for them, so each is priced as one job of the priced work.
 */
export function helperBusyJobs(node: NodeState, helper: ModelState): number {
  const holds = node.lanes[runtimeLaneOf(helper)] ?? null;
  const inLane = holds === null || holds === helper.model ? helper : findModel(node, holds);
  const atEngine = Math.max(0, inLane?.active ?? 0);
  return atEngine + (inLane === helper ? 0 : Math.max(0, helper.active)) + Math.max(0, helper.borrowedWaiting ?? 0);
}

export function pricePair(owner: ModelState, helperNode: NodeState, helper: ModelState): PairPrice {
  const work = owner.heldWork.length ? owner.heldWork[0] : null;
  const ownerJobMs = work === null ? null : predict(owner.fit, work);
  const { mustSwitch, displaced } = helperSwitch(helperNode, helper);
  const helperSwitchMs = mustSwitch ? helper.loadMs : 0;
  const helperRestoreMs = mustSwitch ? restoreMs(helperNode, displaced) : 0;
  const service = servicePrice(helper.fit, owner.fit, work);
  const busyJobs = helperBusyJobs(helperNode, helper);
  const helperBusyMs = service.ms === null ? null : busyJobs * service.ms;
  const helperCostMs =
    helperSwitchMs !== null && helperRestoreMs !== null && service.ms !== null && helperBusyMs !== null
      ? helperSwitchMs + helperBusyMs + service.ms + helperRestoreMs
      : null;
  return {
    work,
    ownerJobMs,
    ownerDrainMs: ownerDrainMs(owner),
    mustSwitch,
    displaced,
    helperSwitchMs,
    helperRestoreMs,
    helperServiceMs: service.ms,
    serviceSource: service.source,
    helperBusyJobs: busyJobs,
    helperBusyMs,
    helperCostMs,
  };
}

/**
 * PRICE-1 with PRICE-5: the helper pays off when handing back the first lent job, load and the displaced
 * model's reload included, beats the owner draining alone. Equivalent to "no lease when [the reload] costs
 * more than the owner saves" with saving = drain − (switch + job). A tie saves nothing: rejected. The load is
 * amortised through the backlog: a deep backlog raises the drain time, a shallow one does not.
 */
export function paysOff(p: PairPrice): boolean {
  return p.helperCostMs !== null && p.ownerDrainMs !== null && p.helperCostMs < p.ownerDrainMs;
}

/**
 * When the owner's backlog would be drained if this helper took lent jobs from it: the owner keeps serving at its
 * job time, the helper joins after its switch and the work already at it, both as fluid rates, and the owner's
 * part that cannot be lent (pinned and engine jobs) bounds it from below. Ranks helpers that all pay off: a faster
 * helper that must load wins over a slower loaded one when the backlog is deep enough to amortise the load.
 * Null when any part is unpriced. The restore comes after the last lent job, off the owner's path.
 */
export function sharedDrainMs(owner: ModelState, p: PairPrice): number | null {
  const { ownerDrainMs: drain, ownerJobMs: o, helperServiceMs: h, helperSwitchMs: sw, helperBusyMs: busy } = p;
  if (drain === null || o === null || h === null || sw === null || busy === null || o <= 0 || h <= 0) return null;
  const start = sw + busy;
  if (drain <= start) return drain;
  const fluid = (drain * h + start * o) / (h + o);
  const unlendable = drain - owner.held * o;
  return Math.min(drain, Math.max(fluid, unlendable, start + h));
}

/** LEASE-9: 2 in flight when the helper's predicted time per job is at most the owner's, else 1. */
export function leaseSlots(helperJobMs: number | null, ownerJobMs: number | null): 1 | 2 {
  return helperJobMs !== null && ownerJobMs !== null && helperJobMs <= ownerJobMs ? 2 : 1;
}

/** PRICE-7: the helper's own traffic is likely back before the detour (switch + way back) pays off. */
export function recentlyBusy(sinceOwnRequestMs: number | null, p: PairPrice): boolean {
  if (!p.mustSwitch || sinceOwnRequestMs === null || p.helperSwitchMs === null || p.helperRestoreMs === null)
    return false;
  return sinceOwnRequestMs < p.helperSwitchMs + p.helperRestoreMs;
}

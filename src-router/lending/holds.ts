/**
 * Holding a request for a faster helper, and cutting off a silent one (HOLD-1..4). Owner side, pure: every time,
 * prediction and the clock reading are explicit inputs; the owner reads its own clock.
 */

/** What the owner knows of its live lease (a LeaseGrant carries all of it). */
export interface HoldLease {
  probe: boolean;
  slots: number;
  /** Both per-job speeds measured from own fits (LeaseGrant.measured). */
  measured: boolean;
  ownerJobMs: number | null;
  helperJobMs: number | null;
  helperSwitchMs: number | null;
}

/** A lease whose speeds are measured on both sides: the only kind that holds (HOLD-2) or cuts off (HOLD-4). */
export function measuredLease(l: HoldLease | null): l is HoldLease & { ownerJobMs: number; helperJobMs: number } {
  return !!l && !l.probe && l.measured && l.ownerJobMs !== null && l.helperJobMs !== null;
}

/**
 * Predicted time the helper finishes the lent requests still out: served one at a time in the order sent.
 * `switchMs` is the lease's predicted switch when none of its lent requests has come back yet (the first one
 * pays the load), else 0. Null when nothing is out.
 */
export function helperLentFinishAt(sentAt: number[], helperJobMs: number, switchMs: number): number | null {
  if (sentAt.length === 0) return null;
  let t = -Infinity;
  [...sentAt]
    .sort((a, b) => a - b)
    .forEach((s, i) => {
      t = Math.max(t, s + (i === 0 ? switchMs : 0)) + helperJobMs;
    });
  return t;
}

export interface SecondSlotQuery {
  now: number;
  /** cluster.offload_hold_for_faster_helper */
  enabled: boolean;
  /** When the owner's current job started generating; null when the owner generates nothing (first slot). */
  ownerCurrentStartedAt: number | null;
  /** The live lease on the owner's clock; null when there is none, it expired, or the master cleared it. */
  lease: HoldLease | null;
  /** Lent requests of this lease still out. */
  lentOut: number;
  /** helperLentFinishAt(...) of those requests (null or past: the helper is predicted free now). */
  helperLentFinishAt: number | null;
}

export type HoldWhy =
  | 'disabled'
  | 'owner_idle'
  | 'no_lease'
  | 'probe_lease'
  | 'unmeasured'
  | 'lent_slot_free'
  | 'helper_overdue'
  | 'owner_sooner'
  | 'helper_sooner';

export interface HoldVerdict {
  hold: boolean;
  why: HoldWhy;
  /** Owner's current job's remainder + this job (the held_for_helper row's "owner's predicted finish"). */
  ownerFinishMs: number | null;
  /** Helper's remaining lent jobs + this job. */
  helperFinishMs: number | null;
  /** HOLD-3 when held: the helper's predicted finish of its lent work plus one job, on the owner's clock. */
  releaseAt: number | null;
}

const no = (why: HoldWhy, ownerFinishMs: number | null = null, helperFinishMs: number | null = null): HoldVerdict => ({
  hold: false,
  why,
  ownerFinishMs,
  helperFinishMs,
  releaseAt: null,
});

/**
 * HOLD-1/2: keep the second slot's next request in the router for the helper when the setting is on, the owner is
 * already generating (never the first slot: the owner never stops generating), a measured non-probe lease is
 * live, every lent slot is busy, and the helper is predicted to finish it sooner: owner's current + this, against
 * helper's remaining lent + this. A tie goes to the owner (holding gains nothing). A helper whose lent work is
 * already overdue past HOLD-3's release point is not waited for.
 */
export function shouldHoldSecondSlot(q: SecondSlotQuery): HoldVerdict {
  if (!q.enabled) return no('disabled');
  if (q.ownerCurrentStartedAt === null) return no('owner_idle');
  if (!q.lease) return no('no_lease');
  if (q.lease.probe) return no('probe_lease');
  const lease = q.lease;
  if (!measuredLease(lease)) return no('unmeasured');
  if (q.lentOut < lease.slots) return no('lent_slot_free');
  const ownerFinishMs = Math.max(0, q.ownerCurrentStartedAt + lease.ownerJobMs - q.now) + lease.ownerJobMs;
  const helperFinishMs = Math.max(0, (q.helperLentFinishAt ?? q.now) - q.now) + lease.helperJobMs;
  if (!(helperFinishMs < ownerFinishMs)) return no('owner_sooner', ownerFinishMs, helperFinishMs);
  // A helper already past HOLD-3's release point would have the request released at once: do not hold it.
  const releaseAt = heldReleaseAt(q.helperLentFinishAt ?? q.now, lease.helperJobMs);
  if (heldReleaseDue(q.now, releaseAt)) return no('helper_overdue', ownerFinishMs, helperFinishMs);
  return { hold: true, why: 'helper_sooner', ownerFinishMs, helperFinishMs, releaseAt };
}

/**
 * HOLD-3: "released as soon as the helper has taken more than its predicted finish plus one job to answer".
 * Interpretation: "its predicted finish" is the helper's predicted finish of the lent work the request waits
 * behind, as predicted when the request was held; one helper job of slack is added (which is also when the held
 * request itself would have been done on the helper).
 */
export function heldReleaseAt(helperLentFinishAt: number, helperJobMs: number): number {
  return helperLentFinishAt + helperJobMs;
}

/** HOLD-3 on the owner's own clock: due at `releaseAt` (a timer set for that moment releases). */
export function heldReleaseDue(now: number, releaseAt: number): boolean {
  return now >= releaseAt;
}

export interface KeepHeldQuery {
  now: number;
  enabled: boolean;
  /** The owner's engine has a job running or waiting; false when it would otherwise idle. */
  ownerBusy: boolean;
  /** A lease is still live on the owner's clock (not cleared, not expired). */
  leaseLive: boolean;
  /** HoldVerdict.releaseAt recorded when the request was held. */
  releaseAt: number;
}

export type HoldRelease = 'disabled' | 'owner_idle' | 'lease_cleared' | 'helper_overdue';

/** HOLD-2/3: why a held request goes to the owner now, or null while it keeps waiting for the helper. */
export function holdReleaseReason(q: KeepHeldQuery): HoldRelease | null {
  if (!q.enabled) return 'disabled';
  if (!q.ownerBusy) return 'owner_idle';
  if (!q.leaseLive) return 'lease_cleared';
  if (heldReleaseDue(q.now, q.releaseAt)) return 'helper_overdue';
  return null;
}

/** HOLD-4: the lent request's deadline to start answering: sent + 3 × (switch + job) + 30 s; null when unmeasured. */
export function lentCutoffAt(sentAt: number, lease: HoldLease | null): number | null {
  if (!measuredLease(lease) || lease.helperSwitchMs === null) return null;
  return sentAt + 3 * (lease.helperSwitchMs + lease.helperJobMs) + 30_000;
}

/** HOLD-4: cut off and serve on the owner when the helper has not started answering by the deadline. */
export function lentCutoffDue(now: number, sentAt: number, answerStarted: boolean, lease: HoldLease | null): boolean {
  if (answerStarted) return false;
  const at = lentCutoffAt(sentAt, lease);
  return at !== null && now >= at;
}

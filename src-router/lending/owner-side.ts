import type { FastifyBaseLogger } from 'fastify';
import { lendableItem, type ModelQueue, type QueueItem } from '../queue';
import {
  heldForHelperRow,
  type LeaseClearedReason,
  leaseClearedRow,
  leaseRefusedRow,
  leaseUpdatedRow,
  lentRow,
  type ReturnedReason,
  returnedRow,
} from './decision-rows';
import { helperLentFinishAt, holdReleaseReason, measuredLease, shouldHoldSecondSlot } from './holds';
import type { DecisionSink, MasterPort } from './ports';
import type { LeaseGrant, ModelRef, Trigger } from './types';

interface LiveLeaseOnOwner {
  grant: LeaseGrant;
  /** Timed on the owner's own clock (LEASE-6). */
  expiresAt: number;
  cancel: () => void;
}

/** Runs `fn` after `ms` on the owner's clock; returns its cancel. The node's is a real (unref'd) timer; the replay's is simulated. */
export type ScheduleFn = (fn: () => void, ms: number) => () => void;

const runNow = (fn: () => void) => fn();

/**
 * How long the report of a finished job waits for company while nothing waits at the owner. Such a job
 * cannot bring this owner a lease (there is nothing to lend), and a decision per finished job cost the cluster about a
 * millisecond of CPU per request: short requests one after another now share a report. Any event while something
 * waits is reported at once, and takes the waiting report with it.
 */
export const QUIET_REPORT_MS = 50;

export const realSchedule: ScheduleFn = (fn, ms) => {
  const t = setTimeout(fn, ms);
  t.unref();
  return () => clearTimeout(t);
};

export interface OwnerSideDeps {
  nodeId: string;
  master: MasterPort;
  decisions: DecisionSink;
  log: FastifyBaseLogger;
  now(): number;
  queueOf(localId: string): ModelQueue | undefined;
  /** Whether this node's model is an owner in some link (a helper-only model never lends, QUEUE-4). */
  isOwner(localId: string): boolean;
  /** LLM-2: the estimated size of a request in tokens, or null when unknown. */
  tokensOf?(localId: string, item: QueueItem): number | null;
  /** cluster.offload_hold_for_faster_helper (HOLD-1). */
  holdEnabled: boolean;
  /** Timers (lease expiry, HOLD-3 release); default real ones. */
  schedule?: ScheduleFn;
  /** Runs a report after the current turn (the node: `setImmediate`); default at once (the replay's simulated clock). */
  deferReport?(fn: () => void): void;
}

/** One model's reports: one in flight, the trigger behind it, and the wait of a quiet finished job's report. */
interface Reporting {
  inFlight: boolean;
  pending: Trigger | null;
  /** Cancels the wait of a report of finished jobs while nothing waits (`QUIET_REPORT_MS`). */
  quiet: (() => void) | null;
  /** When the pending report became due: its earliest event (null while it waits quietly, by design). */
  since: number | null;
}

/**
 * The owner's side of lending (LEASE-2..6): reports queue events of its linked models to the master, keeps the
 * lease it is answered with on its own clock, lends held requests up to the lease's slots, never recalls one.
 * Reports are coalesced per model: one in flight, at most one more behind it.
 */
export class OwnerSide {
  private readonly leases = new Map<string, LiveLeaseOnOwner>();
  private readonly reporting = new Map<string, Reporting>();
  private readonly holdTimers = new Map<string, () => void>();
  private readonly schedule: ScheduleFn;

  constructor(private readonly deps: OwnerSideDeps) {
    this.schedule = deps.schedule ?? realSchedule;
  }

  lease(localId: string): LeaseGrant | null {
    const l = this.leases.get(localId);
    return l && l.expiresAt > this.deps.now() ? l.grant : null;
  }

  /** Leases in force now, by owner model (the node's metrics). */
  leasesInForce(): { model: string; grant: LeaseGrant }[] {
    const now = this.deps.now();
    return [...this.leases].filter(([, l]) => l.expiresAt > now).map(([model, l]) => ({ model, grant: l.grant }));
  }

  /** A queue event of an enrolled model: tell the master (owners only) and lend what the lease allows. */
  onQueueEvent(localId: string, trigger: Trigger): void {
    if (!this.deps.isOwner(localId)) return;
    this.dispatch(localId);
    const r = this.reporting.get(localId) ?? { inFlight: false, pending: null, quiet: null, since: null };
    this.reporting.set(localId, r);
    r.pending = trigger;
    r.since ??= this.deps.now();
    if (r.inFlight) return;
    if (this.waitQuietly(localId, r)) return;
    // Sent once the request that caused it is on its way (the answer written, the engine called): the report is a
    // call to the master, and on the request's own turn it would delay that request. Events of the same
    // turn coalesce into the last one.
    r.inFlight = true;
    (this.deps.deferReport ?? runNow)(() => this.send(localId, r));
  }

  /**
   * A finished job while nothing waits here is reported with what follows within QUIET_REPORT_MS (LEASE-2's
   * coalescing), as it cannot bring this owner a lease: true while its report waits. Anything else ends the wait.
   */
  private waitQuietly(localId: string, r: Reporting): boolean {
    if (r.pending === 'completed' && !this.deps.queueOf(localId)?.waitingCount) {
      // Nothing is in flight while it waits: every path that sends ends the wait first.
      r.quiet ??= this.schedule(() => {
        r.quiet = null;
        this.send(localId, r);
      }, QUIET_REPORT_MS);
      r.since = null;
      return true;
    }
    r.quiet?.();
    r.quiet = null;
    return false;
  }

  /** Reports the pending trigger now: one report in flight per model. */
  private send(localId: string, r: Reporting): void {
    const trigger = r.pending!;
    const since = r.since ?? this.deps.now();
    r.pending = null;
    r.since = null;
    r.inFlight = true;
    void this.report(localId, r, trigger, since);
  }

  /** `since`: when the report became due (its earliest event); the answer's lease row keeps the time since then. */
  private async report(localId: string, r: Reporting, trigger: Trigger, since: number): Promise<void> {
    try {
      const grant = await this.deps.master.event({ nodeId: this.deps.nodeId, model: localId }, trigger);
      this.apply(localId, grant, this.deps.now() - since);
    } catch (err) {
      this.deps.log.warn({ model: localId }, `lending event not delivered to the master: ${(err as Error).message}`);
    } finally {
      r.inFlight = false;
      // What came meanwhile goes now, unless it is a quiet finished job (it waits with what follows).
      if (r.pending && !this.waitQuietly(localId, r)) this.send(localId, r);
    }
  }

  /**
   * A lease (or none) from the master, answered to an event or pushed on a tick; false when refused. `decisionMs`: an
   * event's answer, how long it took from the event (its earliest coalesced one; this node's clock) to the lease, kept
   * on the row a new or changed lease writes: what a replay of the record takes as the cluster's decision latency.
   */
  apply(localId: string, grant: LeaseGrant | null, decisionMs?: number): boolean {
    if (grant && !this.deps.isOwner(localId)) {
      this.deps.decisions.add(leaseRefusedRow({ ...this.leaseArgs(localId, grant), reason: 'not_an_owner' }));
      return false;
    }
    const old = this.leases.get(localId);
    if (old) old.cancel();
    if (!grant) {
      if (old) this.clear(localId, old.grant, 'no_lease');
      return true;
    }
    const expiresAt = this.deps.now() + grant.ttlMs;
    const cancel = this.schedule(() => this.expire(localId, expiresAt), grant.ttlMs);
    this.leases.set(localId, { grant, expiresAt, cancel });
    if (!old || changed(old.grant, grant)) {
      this.deps.decisions.add(
        leaseUpdatedRow({
          ...this.leaseArgs(localId, grant),
          helper: grant.helper,
          linkId: grant.linkId,
          slots: grant.slots,
          probe: grant.probe,
          ttlMs: grant.ttlMs,
          ownerJobMs: grant.ownerJobMs,
          helperJobMs: grant.helperJobMs,
          details: { measured: grant.measured, ...(decisionMs === undefined ? {} : { decisionMs }) },
        }),
      );
    }
    // HOLD-2: a request held for the helper goes to the owner when the lease it was held under is gone: it names
    // another helper, or it became a probe or lost its measured speeds (only measured leases hold).
    if (old && (changed(old.grant, grant) || !measuredLease(grant))) this.releaseHeld(localId);
    this.dispatch(localId);
    return true;
  }

  private expire(localId: string, expiresAt: number) {
    const l = this.leases.get(localId);
    if (!l || l.expiresAt !== expiresAt) return;
    this.clear(localId, l.grant, 'ttl_expired');
  }

  private clear(localId: string, grant: LeaseGrant, reason: LeaseClearedReason) {
    this.leases.delete(localId);
    this.deps.decisions.add(leaseClearedRow({ ...this.leaseArgs(localId, grant), reason }));
    this.releaseHeld(localId);
  }

  /** The columns every owner dispatch row shares: the lease, and how many of this model's requests are out now. */
  private leaseArgs(localId: string, grant: LeaseGrant | null) {
    return {
      at: this.deps.now(),
      linkId: grant?.linkId ?? null,
      owner: { nodeId: this.deps.nodeId, model: localId } as ModelRef,
      helper: grant?.helper ?? null,
      slots: grant?.slots ?? null,
      requestsOut: this.deps.queueOf(localId)?.lentCount ?? 0,
    };
  }

  /**
   * HOLD-1: the request that would fill the owner's second slot waits in the router for the helper when a measured
   * lease is live, every lent slot is busy, and the helper is predicted to finish it sooner. Logged held_for_helper;
   * released when the helper overruns its prediction plus one job (HOLD-3), the lease clears, or the owner idles.
   */
  holdSecond(localId: string, item: QueueItem, firstStartedAt: number): boolean {
    const queue = this.deps.queueOf(localId);
    const grant = this.lease(localId);
    // Only a request the helper could take is held: lendable, and (LLM-2) within the helper's window.
    if (!queue || !grant || !lendableItem(item) || !this.fitsHelper(localId, item, grant)) return false;
    const now = this.deps.now();
    const helperKey = `${grant.helper.nodeId}/${grant.helper.model}`;
    const lent = queue.view().lent.filter((i) => i.lentTo?.helper === helperKey);
    const verdict = shouldHoldSecondSlot({
      now,
      enabled: this.deps.holdEnabled,
      ownerCurrentStartedAt: firstStartedAt,
      lease: grant,
      lentOut: lent.length,
      helperLentFinishAt:
        grant.helperJobMs === null
          ? null
          : helperLentFinishAt(
              lent.map((i) => i.startedAt ?? now),
              grant.helperJobMs,
              grant.helperSwitchMs ?? 0,
            ),
    });
    if (
      !verdict.hold ||
      verdict.releaseAt === null ||
      verdict.ownerFinishMs === null ||
      grant.ownerJobMs === null ||
      grant.helperJobMs === null
    )
      return false;
    this.deps.decisions.add(
      heldForHelperRow({
        ...this.leaseArgs(localId, grant),
        helper: grant.helper,
        requestId: item.id,
        ownerPredictedFinishMs: verdict.ownerFinishMs,
        ownerJobMs: grant.ownerJobMs,
        helperJobMs: grant.helperJobMs,
        waitedMs: now - item.arrivedAt,
        details: verdict.helperFinishMs === null ? undefined : { helperPredictedFinishMs: verdict.helperFinishMs },
      }),
    );
    this.holdTimers.get(localId)?.();
    const cancel = this.schedule(
      () => {
        const reason = holdReleaseReason({
          now: this.deps.now(),
          enabled: this.deps.holdEnabled,
          ownerBusy: queue.activeCount > 0,
          leaseLive: this.lease(localId) !== null,
          releaseAt: verdict.releaseAt!,
        });
        if (reason) this.releaseHeld(localId);
      },
      Math.max(0, verdict.releaseAt - now) + 1,
    );
    this.holdTimers.set(localId, cancel);
    return true;
  }

  private releaseHeld(localId: string) {
    this.holdTimers.get(localId)?.();
    this.holdTimers.delete(localId);
    this.deps.queueOf(localId)?.releaseHeld();
  }

  /**
   * The leased helper can take this request: LLM-2, its estimated size fits the helper's window (unknown window or
   * size: it fits); LLM-1, image input goes only to a helper with vision.
   */
  private fitsHelper(localId: string, item: QueueItem, grant: LeaseGrant): boolean {
    if (item.imageInput && grant.helperMultimodal !== true) return false;
    const tokens = this.deps.tokensOf?.(localId, item) ?? null;
    return !grant.helperContextsize || tokens === null || tokens <= grant.helperContextsize;
  }

  private readonly dispatching = new Set<string>();
  private readonly dispatchAgain = new Set<string>();

  /**
   * Lends held requests up to the lease's slots (LEASE-4); a request too large for the helper stays (LLM-2). Lending
   * changes the queue, and the queue tells this side again: such a nested call only asks for one more pass, so every
   * lent request gets exactly one `lent` row, written when it leaves, with the requests out counting it.
   */
  dispatch(localId: string): void {
    if (this.dispatching.has(localId)) {
      this.dispatchAgain.add(localId);
      return;
    }
    this.dispatching.add(localId);
    try {
      do {
        this.dispatchAgain.delete(localId);
        this.lendUpToSlots(localId);
      } while (this.dispatchAgain.has(localId));
    } finally {
      this.dispatching.delete(localId);
    }
  }

  private lendUpToSlots(localId: string): void {
    const grant = this.lease(localId);
    const queue = this.deps.queueOf(localId);
    if (!grant || !queue) return;
    // Slots are the leased helper's: requests still out at a helper of an earlier lease do not take them.
    const helper = `${grant.helper.nodeId}/${grant.helper.model}`;
    let out = queue.lentAt(helper);
    for (const item of queue.lendable()) {
      if (out >= grant.slots) break;
      if (!this.fitsHelper(localId, item, grant)) continue;
      item.lentTo = { helper, helperJobMs: grant.helperJobMs, helperSwitchMs: grant.helperSwitchMs };
      if (!queue.lend(item, grant)) continue;
      out++;
      this.deps.decisions.add(lentRow({ ...this.leaseArgs(localId, grant), helper: grant.helper, requestId: item.id }));
    }
  }

  /** A lent request came back (409 from the helper, refused by the master, cut off): recorded, never lent again. */
  returned(localId: string, item: QueueItem, reason: ReturnedReason): void {
    this.deps.decisions.add(
      returnedRow({ ...this.leaseArgs(localId, this.lease(localId)), requestId: item.id, reason }),
    );
  }

  stop(): void {
    for (const cancel of this.holdTimers.values()) cancel();
    for (const l of this.leases.values()) l.cancel();
    this.leases.clear();
  }
}

/** A lease names another helper, slot count or kind than before. */
const changed = (a: LeaseGrant, b: LeaseGrant) =>
  a.helper.nodeId !== b.helper.nodeId ||
  a.helper.model !== b.helper.model ||
  a.slots !== b.slots ||
  a.probe !== b.probe ||
  a.measured !== b.measured;

import type { FastifyBaseLogger } from 'fastify';
import type { ModelQueue, QueueItem } from '../queue';
import { helperLentFinishAt, holdReleaseReason, shouldHoldSecondSlot } from './holds';
import type { DecisionSink, MasterPort } from './ports';
import type { LeaseGrant, ModelRef, Trigger } from './types';

interface LiveLeaseOnOwner {
  grant: LeaseGrant;
  /** Timed on the owner's own clock (LEASE-6). */
  expiresAt: number;
  timer: NodeJS.Timeout;
}

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
}

/**
 * The owner's side of lending (LEASE-2..6): reports queue events of its linked models to the master, keeps the
 * lease it is answered with on its own clock, lends held requests up to the lease's slots, never recalls one.
 * Reports are coalesced per model: one in flight, at most one more behind it.
 */
export class OwnerSide {
  private readonly leases = new Map<string, LiveLeaseOnOwner>();
  private readonly reporting = new Map<string, { inFlight: boolean; pending: Trigger | null }>();
  private readonly holdTimers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly deps: OwnerSideDeps) {}

  lease(localId: string): LeaseGrant | null {
    const l = this.leases.get(localId);
    return l && l.expiresAt > this.deps.now() ? l.grant : null;
  }

  /** A queue event of an enrolled model: tell the master (owners only) and lend what the lease allows. */
  onQueueEvent(localId: string, trigger: Trigger): void {
    if (!this.deps.isOwner(localId)) return;
    this.dispatch(localId);
    const r = this.reporting.get(localId) ?? { inFlight: false, pending: null };
    this.reporting.set(localId, r);
    if (r.inFlight) {
      r.pending = trigger;
      return;
    }
    void this.report(localId, trigger);
  }

  private async report(localId: string, trigger: Trigger): Promise<void> {
    const r = this.reporting.get(localId)!;
    r.inFlight = true;
    try {
      const grant = await this.deps.master.event({ nodeId: this.deps.nodeId, model: localId }, trigger);
      this.apply(localId, grant);
    } catch (err) {
      this.deps.log.warn({ model: localId }, `lending event not delivered to the master: ${(err as Error).message}`);
    } finally {
      r.inFlight = false;
      const next = r.pending;
      r.pending = null;
      if (next) void this.report(localId, next);
    }
  }

  /** A lease (or none) from the master, answered to an event or pushed on a tick; false when refused. */
  apply(localId: string, grant: LeaseGrant | null): boolean {
    const queue = this.deps.queueOf(localId);
    if (grant && !this.deps.isOwner(localId)) {
      this.row('lease_refused', localId, grant, { reason: 'not_an_owner' });
      return false;
    }
    const old = this.leases.get(localId);
    if (old) clearTimeout(old.timer);
    if (!grant) {
      if (old) {
        this.leases.delete(localId);
        this.row('lease_cleared', localId, old.grant, { reason: 'no_lease', requestsOut: queue?.lentCount ?? 0 });
        this.releaseHeld(localId);
      }
      return true;
    }
    const expiresAt = this.deps.now() + grant.ttlMs;
    const timer = setTimeout(() => this.expire(localId, expiresAt), grant.ttlMs);
    timer.unref();
    this.leases.set(localId, { grant, expiresAt, timer });
    if (!old || old.grant.helper.nodeId !== grant.helper.nodeId || old.grant.helper.model !== grant.helper.model || old.grant.slots !== grant.slots || old.grant.probe !== grant.probe) {
      this.row('lease_updated', localId, grant, { requestsOut: queue?.lentCount ?? 0, details: JSON.stringify({ probe: grant.probe, ttlMs: grant.ttlMs, measured: grant.measured }) });
    }
    this.dispatch(localId);
    return true;
  }

  private expire(localId: string, expiresAt: number) {
    const l = this.leases.get(localId);
    if (!l || l.expiresAt !== expiresAt) return;
    this.leases.delete(localId);
    this.row('lease_cleared', localId, l.grant, { reason: 'ttl_expired', requestsOut: this.deps.queueOf(localId)?.lentCount ?? 0 });
    this.releaseHeld(localId);
  }

  /**
   * HOLD-1: the request that would fill the owner's second slot waits in the router for the helper when a measured
   * lease is live, every lent slot is busy, and the helper is predicted to finish it sooner. Logged held_for_helper;
   * released when the helper overruns its prediction plus one job (HOLD-3), the lease clears, or the owner idles.
   */
  holdSecond(localId: string, item: QueueItem, firstStartedAt: number): boolean {
    const queue = this.deps.queueOf(localId);
    const grant = this.lease(localId);
    if (!queue || !grant) return false;
    const now = this.deps.now();
    const lent = queue.view().lent;
    const verdict = shouldHoldSecondSlot({
      now, enabled: this.deps.holdEnabled, ownerCurrentStartedAt: firstStartedAt, lease: grant, lentOut: lent.length,
      helperLentFinishAt: grant.helperJobMs === null ? null : helperLentFinishAt(lent.map((i) => i.startedAt ?? now), grant.helperJobMs, grant.helperSwitchMs ?? 0),
    });
    if (!verdict.hold || verdict.releaseAt === null) return false;
    this.row('held_for_helper', localId, grant, {
      requestId: item.id, requestsOut: lent.length, ownerPredictedFinishMs: verdict.ownerFinishMs, waitedMs: now - item.arrivedAt,
      details: JSON.stringify({ helperPredictedFinishMs: verdict.helperFinishMs }),
    });
    clearTimeout(this.holdTimers.get(localId));
    const timer = setTimeout(() => {
      const reason = holdReleaseReason({ now: this.deps.now(), enabled: this.deps.holdEnabled, ownerBusy: queue.activeCount > 0, leaseLive: this.lease(localId) !== null, releaseAt: verdict.releaseAt! });
      if (reason) this.releaseHeld(localId);
    }, Math.max(0, verdict.releaseAt - now) + 1);
    timer.unref();
    this.holdTimers.set(localId, timer);
    return true;
  }

  private releaseHeld(localId: string) {
    clearTimeout(this.holdTimers.get(localId));
    this.holdTimers.delete(localId);
    this.deps.queueOf(localId)?.releaseHeld();
  }

  /** Lends held requests up to the lease's slots (LEASE-4); a request too large for the helper stays (LLM-2). */
  dispatch(localId: string): void {
    const grant = this.lease(localId);
    const queue = this.deps.queueOf(localId);
    if (!grant || !queue) return;
    const outToHelper = () => queue.view().lent.length;
    for (const item of queue.lendable()) {
      if (outToHelper() >= grant.slots) break;
      const tokens = this.deps.tokensOf?.(localId, item) ?? null;
      if (grant.helperContextsize && tokens !== null && tokens > grant.helperContextsize) continue;
      if (queue.lend(item, grant)) this.row('lent', localId, grant, { requestsOut: outToHelper(), requestId: item.id });
    }
  }

  /** A lent request came back (409 from the helper, or refused by the master): recorded, never lent again. */
  returned(localId: string, item: QueueItem, reason: string): void {
    const grant = this.lease(localId);
    this.row('returned', localId, grant, { reason, requestId: item.id, requestsOut: this.deps.queueOf(localId)?.lentCount ?? 0 });
  }

  private row(event: string, localId: string, grant: LeaseGrant | null, extra: Record<string, unknown>) {
    const owner: ModelRef = { nodeId: this.deps.nodeId, model: localId };
    this.deps.decisions.add({
      kind: 'dispatch', event, at: this.deps.now(), linkId: grant?.linkId ?? null,
      ownerNode: owner.nodeId, ownerModel: owner.model, helperNode: grant?.helper.nodeId ?? null, helperModel: grant?.helper.model ?? null,
      slots: grant?.slots ?? null, ownerJobMs: grant?.ownerJobMs ?? null, helperJobMs: grant?.helperJobMs ?? null, ...extra,
    });
  }

  stop(): void {
    for (const t of this.holdTimers.values()) clearTimeout(t);
    for (const l of this.leases.values()) clearTimeout(l.timer);
    this.leases.clear();
  }
}

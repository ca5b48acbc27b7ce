import type { FastifyBaseLogger } from 'fastify';
import type { Supervisor } from '../backends';
import type { ModelQueue, QueueItem } from '../queue';
import type { DecisionSink } from './ports';
import type { LinkSpec, ModelRef } from './types';

export interface HelperSideDeps {
  nodeId: string;
  decisions: DecisionSink;
  log: FastifyBaseLogger;
  now(): number;
  supervisor: Supervisor;
  queues(): ModelQueue[];
  /** The applied link from `owner` to this node's `localId`, if any. */
  linkFor(owner: ModelRef, localId: string): LinkSpec | undefined;
  restoreDelayMs: number;
  /** Marks this node busy with its own work (a restore is an own load, PROBE-3); returns the end marker. */
  ownBusy(): () => void;
  /** Own requests that arrived and have not claimed the runtime yet, whatever model they are for. */
  ownPending(): number;
}

interface RestorePlan {
  lane: string;
  /** What the lane held before the run of borrowed requests started (HELPER-4). */
  previous: string;
  timer?: NodeJS.Timeout;
}

/**
 * The helper's side (HELPER-1..4): takes borrowed work only while its own queue is empty, hands unstarted borrowed
 * requests back (409 offload_returned) when its own work arrives, respects `load_if_unloaded`, restores what the
 * borrowed work displaced after `offload_restore_delay` of quiet, and logs its helper rows (LOG-4).
 */
export class HelperSide {
  /** Borrowed requests holding an engine slot but still waiting for the runtime: they can still be taken back (HELPER-2). */
  private readonly claiming = new Map<QueueItem, AbortController>();
  private readonly restores = new Map<string, RestorePlan>();
  private borrowedRunning = 0;
  /** Borrowed requests (ids) that hold the runtime: they always finish (HELPER-2) and are not cut off (HOLD-4). */
  private readonly started = new Set<string>();

  hasStarted(requestId: string): boolean {
    return this.started.has(requestId);
  }

  constructor(private readonly deps: HelperSideDeps) {}

  private ownWaiting(): number {
    return this.deps.queues().reduce((n, q) => n + q.ownWaiting(), 0);
  }

  /** HELPER-1: no borrowed work while own work waits. */
  acceptsBorrowed(): boolean {
    return this.ownWaiting() === 0 && this.deps.ownPending() === 0;
  }

  borrowedInFlight(): number {
    return this.deps.queues().reduce((n, q) => n + q.borrowedActive() + q.borrowedWaiting(), 0);
  }

  /** A borrowed request arrives: null when accepted, else why it is handed straight back (409). */
  checkArrival(localId: string, owner: ModelRef): string | null {
    if (!this.acceptsBorrowed()) return this.returned(localId, owner, 'busy_on_arrival');
    const link = this.deps.linkFor(owner, localId);
    if (!link) return this.returned(localId, owner, 'no_link');
    if (!link.loadIfUnloaded && this.deps.supervisor.state(localId) !== 'ready') return this.returned(localId, owner, 'load_forbidden');
    return null;
  }

  private returned(localId: string, owner: ModelRef, reason: string): string {
    this.deps.decisions.add({ kind: 'helper', event: 'borrowed_returned', at: this.deps.now(), ownerNode: owner.nodeId, ownerModel: owner.model, helperNode: this.deps.nodeId, helperModel: localId, reason });
    return reason;
  }

  /** The node's own request arrived: hand back every borrowed request that has not claimed the runtime (HELPER-1/2, HELPER-4). */
  onOwnArrival(): void {
    for (const plan of this.restores.values()) {
      if (plan.timer) clearTimeout(plan.timer);
      plan.timer = undefined;
    }
    this.restores.clear();
    for (const q of this.deps.queues()) {
      for (const item of q.returnBorrowed('own_work_arrived')) this.takenBack(q.localId, item);
    }
    for (const [item, ctl] of this.claiming) {
      ctl.abort();
      this.claiming.delete(item);
      this.takenBack(this.localOf(item), item);
      this.claimingModel.delete(item);
    }
  }

  private readonly claimingModel = new Map<QueueItem, string>();

  private localOf(item: QueueItem): string {
    return this.claimingModel.get(item) ?? '';
  }

  /** LOG-4: one borrowed_returned row per request handed back because own work arrived. */
  private takenBack(localId: string, item: QueueItem) {
    const [ownerNode, ...rest] = (item.owner ?? '/').split('/');
    this.deps.decisions.add({ kind: 'helper', event: 'borrowed_returned', at: this.deps.now(), ownerNode, ownerModel: rest.join('/'), helperNode: this.deps.nodeId, helperModel: localId, reason: 'own_work_arrived', requestId: item.id });
  }

  /** A borrowed request got an engine slot: until it claims the runtime it can still be taken back. */
  claimSignal(item: QueueItem, localId: string): AbortSignal {
    const ctl = new AbortController();
    this.claiming.set(item, ctl);
    this.claimingModel.set(item, localId);
    return ctl.signal;
  }

  /** The borrowed request holds the runtime now: it always finishes. Remembers what the run displaced. */
  claimed(item: QueueItem, localId: string): void {
    this.started.add(item.id);
    this.claiming.delete(item);
    this.claimingModel.delete(item);
    this.borrowedRunning++;
    const lane = this.deps.supervisor.adapter(localId).lane;
    const plan = this.restores.get(lane);
    if (plan?.timer) {
      clearTimeout(plan.timer);
      plan.timer = undefined;
    }
  }

  /** Before a borrowed request's lane switch: what the lane holds now is what a run restores. */
  beforeBorrowedLoad(localId: string): void {
    const lane = this.deps.supervisor.adapter(localId).lane;
    if (this.restores.has(lane)) return; // a run is under way: keep what was loaded before it started
    const held = this.deps.supervisor.laneStatus().find((l) => l.lane === lane)?.loaded;
    if (held && held !== localId) this.restores.set(lane, { lane, previous: held });
  }

  /** A borrowed request ended (or was taken back before claiming). */
  borrowedDone(item: QueueItem, localId: string, owner: ModelRef, claimedRuntime: boolean): void {
    this.started.delete(item.id);
    this.claiming.delete(item);
    this.claimingModel.delete(item);
    if (claimedRuntime) this.borrowedRunning--;
    const lane = this.deps.supervisor.adapter(localId).lane;
    const plan = this.restores.get(lane);
    if (plan && this.deps.linkFor(owner, localId)?.restoreAfterBorrow) this.scheduleRestore(plan);
    else if (plan && !this.deps.linkFor(owner, localId)?.restoreAfterBorrow) this.restores.delete(lane);
  }

  /** HELPER-4: reload the displaced model once `restoreDelayMs` passed with no borrowed work and no own work running. */
  private scheduleRestore(plan: RestorePlan) {
    if (plan.timer) clearTimeout(plan.timer);
    plan.timer = setTimeout(() => void this.tryRestore(plan), this.deps.restoreDelayMs);
    plan.timer.unref();
  }

  private async tryRestore(plan: RestorePlan) {
    plan.timer = undefined;
    if (this.restores.get(plan.lane) !== plan) return;
    const lanes = this.deps.supervisor.laneStatus();
    const busy = this.borrowedInFlight() > 0 || this.claiming.size > 0 || lanes.some((l) => l.inflight > 0 || l.queued > 0);
    if (busy) return this.scheduleRestore(plan);
    this.restores.delete(plan.lane);
    if (lanes.find((l) => l.lane === plan.lane)?.loaded === plan.previous) return;
    const done = this.deps.ownBusy();
    try {
      await this.deps.supervisor.preload(plan.previous);
      this.deps.log.info(`restored ${plan.previous} after borrowed work`);
    } catch (err) {
      this.deps.log.warn(`restore of ${plan.previous} failed: ${(err as Error).message}`);
    } finally {
      done();
    }
  }

  /** LOG-4: the node's own request waited behind borrowed jobs already in the backend. */
  nativeWaited(localId: string, borrowedInBackend: number, waitedMs: number): void {
    if (borrowedInBackend <= 0) return;
    this.deps.decisions.add({ kind: 'helper', event: 'native_waited_behind_borrowed', at: this.deps.now(), helperNode: this.deps.nodeId, helperModel: localId, borrowedInBackend, waitedMs: Math.round(waitedMs) });
  }

  stop(): void {
    for (const plan of this.restores.values()) if (plan.timer) clearTimeout(plan.timer);
    this.restores.clear();
  }
}

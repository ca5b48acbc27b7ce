import type { FastifyBaseLogger } from 'fastify';
import type { LaneRestorer, Supervisor } from '../backends';
import type { ModelQueue, QueueItem } from '../queue';
import { type BorrowedReturnedReason, borrowedReturnedRow, nativeWaitedBehindBorrowedRow } from './decision-rows';
import type { DecisionSink, WithdrawResult } from './ports';
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
  /** HELPER-4: puts back what borrowed work displaced (shared with guardian answers, GUARD-3). */
  restorer: LaneRestorer;
  /** Own requests that arrived and have not claimed the runtime yet, whatever model they are for. */
  ownPending(): number;
  /** Answers are kept at least this long (past the request and stall time-outs): whoever resolves a broken relay fetches them. */
  answerKeepMs?: number;
}

/** A borrowed request on this node, from its arrival until it ends. */
interface Borrowed {
  item: QueueItem;
  localId: string;
  owner: ModelRef;
  /** Aborts its wait for the runtime: taken back before it claimed it (HELPER-2), or withdrawn by its owner. */
  takeBack?: AbortController;
  /** It holds the runtime: it always finishes (HELPER-2) and is never cut off (HOLD-4). */
  started: boolean;
}

/** How long at least, and how many, answers of borrowed requests are kept for owners whose relay broke. */
const ANSWER_KEEP_MS = 2 * 60_000;
/** Bounded by count: an image answer can be megabytes. */
const ANSWER_MAX = 64;

/** How long a withdrawn or cancelled request id is remembered (a forward still on its way is refused when it arrives). */
const WITHDRAWN_KEEP_MS = 10 * 60_000;
const WITHDRAWN_MAX = 10_000;

/**
 * The helper's side (HELPER-1..5): takes borrowed work only while its own queue is empty, hands unstarted borrowed
 * requests back (409 offload_returned) when its own work arrives, answers the master's withdrawals in one step,
 * respects `load_if_unloaded`, restores what the borrowed work displaced after `offload_restore_delay` of quiet, and
 * logs its helper rows (LOG-4).
 */
export class HelperSide {
  private readonly borrowed = new Map<string, Borrowed>();
  /** Request ids the master withdrew before they started here, with when (HOLD-4, HELPER-5). */
  private readonly withdrawnIds = new Map<string, number>();
  /** Request ids that claimed the runtime here, with when: still `started` after they finished (never run twice). */
  private readonly startedIds = new Map<string, number>();
  /** Request ids the master cancelled before they arrived here (still in their relay), with when. */
  private readonly cancelledIds = new Map<string, number>();

  /** Answers of borrowed requests, kept a while by request id: an owner whose relay broke can still fetch its answer. */
  private readonly answers = new Map<string, { at: number; answer: { status: number; body: unknown } | null }>();
  private readonly answerWaiters = new Map<string, Set<() => void>>();

  constructor(private readonly deps: HelperSideDeps) {}

  /** A borrowed request ended here with this answer (null: it failed or was cancelled); kept a while (answerKeepMs). */
  keepAnswer(requestId: string, answer: { status: number; body: unknown } | null): void {
    const cutoff = this.deps.now() - Math.max(ANSWER_KEEP_MS, this.deps.answerKeepMs ?? 0);
    for (const [id, a] of this.answers) {
      if (a.at >= cutoff && this.answers.size < ANSWER_MAX) break;
      this.answers.delete(id);
    }
    this.answers.set(requestId, { at: this.deps.now(), answer });
    for (const wake of this.answerWaiters.get(requestId) ?? []) wake();
    this.answerWaiters.delete(requestId);
  }

  /**
   * The answer of a borrowed request that started here: `answered` (with it), `failed` (it ended without one),
   * `running` (still running after `waitMs`), or `unknown` (never started here, or forgotten).
   */
  async answerOf(
    requestId: string,
    waitMs: number,
  ): Promise<{ state: 'answered'; status: number; body: unknown } | { state: 'failed' | 'running' | 'unknown' }> {
    const now = () => this.answers.get(requestId);
    if (!now() && this.borrowed.get(requestId)?.started && waitMs > 0) {
      await new Promise<void>((resolve) => {
        const waiters = this.answerWaiters.get(requestId) ?? new Set<() => void>();
        this.answerWaiters.set(requestId, waiters);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          if (waiters.size === 0 && this.answerWaiters.get(requestId) === waiters) this.answerWaiters.delete(requestId);
          resolve();
        };
        const timer = setTimeout(done, waitMs);
        timer.unref();
        waiters.add(done);
      });
    }
    const kept = now();
    if (kept) return kept.answer ? { state: 'answered', ...kept.answer } : { state: 'failed' };
    // Running only while it really runs here: a started id outlives its kept answer, and then it is unknown.
    return this.borrowed.get(requestId)?.started ? { state: 'running' } : { state: 'unknown' };
  }

  /**
   * A copy of this request is here or ran here (waiting, running, or ended with an answer): a second copy never runs.
   * One withdrawn here, or stopped before it started, is not: its later arrival is judged by `checkArrival`.
   */
  arrivedBefore(requestId: string): boolean {
    this.forgetOldWithdrawals();
    if (this.withdrawnIds.has(requestId)) return false;
    return (
      this.borrowed.has(requestId) ||
      this.startedIds.has(requestId) ||
      (this.answers.get(requestId)?.answer ?? null) !== null
    );
  }

  hasStarted(requestId: string): boolean {
    return (this.borrowed.get(requestId)?.started ?? false) || this.startedIds.has(requestId);
  }

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

  /** Borrowed requests holding an engine slot (running, or about to claim the runtime) on the runtime lane of `localId`. */
  borrowedOnRuntime(localId: string): number {
    const lane = this.deps.supervisor.adapter(localId).lane;
    let n = 0;
    for (const b of this.borrowed.values())
      if (b.item.state === 'active' && this.deps.supervisor.adapter(b.localId).lane === lane) n++;
    return n;
  }

  /** A borrowed request arrives: null when accepted, else why it is handed straight back (409). */
  checkArrival(localId: string, owner: ModelRef, requestId: string): BorrowedReturnedReason | null {
    this.forgetOldWithdrawals();
    if (this.withdrawnIds.has(requestId)) return this.refuse(localId, owner, requestId, 'withdrawn');
    if (!this.acceptsBorrowed()) return this.refuse(localId, owner, requestId, 'busy_on_arrival');
    const link = this.deps.linkFor(owner, localId);
    if (!link) return this.refuse(localId, owner, requestId, 'no_link');
    if (!link.loadIfUnloaded && this.deps.supervisor.state(localId) !== 'ready')
      return this.refuse(localId, owner, requestId, 'load_forbidden');
    // HELPER-4: borrowed work arriving on either lane restarts every pending restore's quiet period.
    this.deps.restorer.quietFromNow();
    return null;
  }

  private refuse(
    localId: string,
    owner: ModelRef,
    requestId: string,
    reason: BorrowedReturnedReason,
  ): BorrowedReturnedReason {
    this.deps.decisions.add(
      borrowedReturnedRow({
        at: this.deps.now(),
        linkId: this.deps.linkFor(owner, localId)?.id ?? null,
        owner,
        helper: { nodeId: this.deps.nodeId, model: localId },
        requestId,
        reason,
        borrowedInBackend: this.borrowedOnRuntime(localId),
      }),
    );
    return reason;
  }

  /** An accepted borrowed request, queued here: tracked until it ends. */
  admitted(item: QueueItem, localId: string, owner: ModelRef): void {
    this.borrowed.set(item.id, { item, localId, owner, started: false });
  }

  /** The node's own request arrived: hand back every borrowed request that has not claimed the runtime (HELPER-1/2), cancel pending restores (HELPER-4) unless it is a guardian's (GUARD-3). */
  onOwnArrival(opts: { keepRestores?: boolean } = {}): void {
    // A guardian answer is the node's own work but part of a run that restores what it displaced (GUARD-3).
    if (!opts.keepRestores) this.deps.restorer.cancelAll();
    for (const q of this.deps.queues()) {
      for (const item of q.returnBorrowed('own_work_arrived')) this.takenBack(q.localId, item, 'own_work_arrived');
    }
    for (const b of this.borrowed.values()) {
      if (b.started || !b.takeBack || b.takeBack.signal.aborted) continue;
      b.takeBack.abort(new Error('own_work_arrived'));
      this.takenBack(b.localId, b.item, 'own_work_arrived');
    }
  }

  /**
   * HOLD-4 / HELPER-5: the master withdraws lent requests. In one step (nothing can run in between): a request that
   * holds the runtime is `started` and finishes; any other is `withdrawn` — handed back if it waits here, and
   * refused if it arrives later — so a request is never run twice.
   */
  withdraw(requestIds: string[]): Record<string, WithdrawResult> {
    this.forgetOldWithdrawals();
    const out: Record<string, WithdrawResult> = {};
    for (const id of requestIds) {
      const b = this.borrowed.get(id);
      if (b?.started || this.startedIds.has(id)) {
        out[id] = 'started';
        continue;
      }
      this.withdrawnIds.set(id, this.deps.now());
      out[id] = 'withdrawn';
      if (!b) continue;
      const q = this.deps.queues().find((x) => x.localId === b.localId);
      if (q?.returnOne(id, 'withdrawn')) this.takenBack(b.localId, b.item, 'withdrawn');
      else if (b.takeBack && !b.takeBack.signal.aborted) {
        b.takeBack.abort(new Error('withdrawn'));
        this.takenBack(b.localId, b.item, 'withdrawn');
      }
    }
    return out;
  }

  /**
   * The owner's client left before its borrowed request arrived here (a relay slower than the cancel): remembered as
   * withdrawn ids are, so the request is stopped when it arrives (`takeCancelled`).
   */
  cancelledBeforeArrival(requestId: string): void {
    this.forgetOldWithdrawals();
    this.cancelledIds.set(requestId, this.deps.now());
  }

  /** Whether a borrowed request arriving now was cancelled before it came (then forgotten: it is stopped once). */
  takeCancelled(requestId: string): boolean {
    return this.cancelledIds.delete(requestId);
  }

  private forgetOldWithdrawals() {
    const cutoff = this.deps.now() - WITHDRAWN_KEEP_MS;
    for (const ids of [this.withdrawnIds, this.startedIds, this.cancelledIds]) {
      for (const [id, at] of ids) {
        if (at >= cutoff && ids.size <= WITHDRAWN_MAX) break;
        ids.delete(id);
      }
    }
  }

  /** LOG-4: one borrowed_returned row per request handed back after it was accepted. */
  private takenBack(localId: string, item: QueueItem, reason: BorrowedReturnedReason) {
    const b = this.borrowed.get(item.id);
    const [ownerNode, ...rest] = (item.owner ?? '/').split('/');
    const owner = b?.owner ?? { nodeId: ownerNode, model: rest.join('/') };
    this.deps.decisions.add(
      borrowedReturnedRow({
        at: this.deps.now(),
        linkId: this.deps.linkFor(owner, localId)?.id ?? null,
        owner,
        helper: { nodeId: this.deps.nodeId, model: localId },
        requestId: item.id,
        reason,
        borrowedInBackend: this.borrowedOnRuntime(localId),
      }),
    );
  }

  /** A borrowed request got an engine slot: until it claims the runtime it can still be taken back. */
  claimSignal(item: QueueItem): AbortSignal {
    const b = this.borrowed.get(item.id);
    const ctl = new AbortController();
    if (b) b.takeBack = ctl;
    if (this.withdrawnIds.has(item.id)) ctl.abort(new Error('withdrawn'));
    return ctl.signal;
  }

  /**
   * The borrowed request got the runtime. False when it was taken back or withdrawn meanwhile: it must not start
   * (the caller gives the runtime back and answers 409). Otherwise it always finishes from here.
   */
  claimed(item: QueueItem): boolean {
    const b = this.borrowed.get(item.id);
    if (!b || b.takeBack?.signal.aborted || this.withdrawnIds.has(item.id)) return false;
    b.started = true;
    this.startedIds.set(item.id, this.deps.now());
    this.forgetOldWithdrawals();
    this.deps.restorer.quietFromNow();
    return true;
  }

  /** Before a borrowed request's lane switch: what the lane holds now is what a run restores. */
  beforeBorrowedLoad(localId: string): void {
    this.deps.restorer.remember(localId);
  }

  /** A borrowed request ended (answered, failed, taken back or withdrawn). */
  borrowedDone(item: QueueItem, localId: string, owner: ModelRef): void {
    this.borrowed.delete(item.id);
    if (!this.deps.linkFor(owner, localId)?.restoreAfterBorrow) this.deps.restorer.forget(localId);
    // The quiet period starts now for every pending restore, on either lane (HELPER-4).
    this.deps.restorer.quietFromNow();
  }

  /** Borrowed work not yet visible on the lanes keeps a restore waiting. */
  holdsRestore(): boolean {
    return this.borrowedInFlight() > 0 || this.borrowed.size > 0;
  }

  /** LOG-4: the node's own request waited behind borrowed jobs already in the backend of its runtime; the wait includes the lane's. */
  nativeWaited(localId: string, requestId: string | null, borrowedInBackend: number, waitedMs: number): void {
    if (borrowedInBackend <= 0) return;
    this.deps.decisions.add(
      nativeWaitedBehindBorrowedRow({
        at: this.deps.now(),
        model: { nodeId: this.deps.nodeId, model: localId },
        requestId,
        borrowedInBackend,
        waitedMs: Math.round(waitedMs),
      }),
    );
  }

  stop(): void {
    this.deps.restorer.stop();
  }
}

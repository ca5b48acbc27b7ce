/**
 * The router queue of one enrolled model (QUEUE-1..5): requests wait here instead of going straight to the
 * engine; at most `depth` are at the engine at once. Own requests go ahead of borrowed ones (QUEUE-4); within each,
 * the oldest first arrival goes first — a request that comes back from a helper keeps its first arrival (QUEUE-5).
 * Only waiting requests can be lent (QUEUE-2); the ones at the engine never move.
 */
import type { ClientGone } from '../backends/call-end';

export type ItemState = 'queued' | 'held' | 'lent' | 'active';

export interface QueueItem {
  id: string;
  /** First arrival at the owning node, kept across returns (QUEUE-5). */
  arrivedAt: number;
  stream: boolean;
  /** Raw body bytes (token estimates, LLM-3) and the work measure (pricing). */
  bodyBytes: number;
  work: number;
  /** Borrowed from another node's owner (this node is the helper). */
  borrowed: boolean;
  /** Came back from a helper: never lent again (HELPER-2). */
  returned: boolean;
  /** Carries image input: lent only to a helper with vision (LLM-1). */
  imageInput?: boolean;
  state: ItemState;
  /** When it reached the engine (active) or was sent to a helper (lent). */
  startedAt?: number;
  /** For borrowed work: the owner it came from, `node/model`. */
  owner?: string;
  /** While lent: the helper it went to (`node/model`) and the lease's predicted times there (ETAs, `queue-eta`). */
  lentTo?: { helper: string; helperJobMs: number | null; helperSwitchMs: number | null };
}

/** Decides whether the request that would fill the SECOND engine slot waits for a faster helper instead (HOLD-1). */
export type SecondSlotPolicy = (item: QueueItem, firstStartedAt: number) => boolean;

/** What a waiting request is told to do. */
export type Dispatch = { kind: 'engine' } | { kind: 'lend'; lease: unknown } | { kind: 'returned'; reason: string };

interface Waiter {
  item: QueueItem;
  resolve(d: Dispatch): void;
}

export interface QueueView {
  depth: number;
  active: QueueItem[];
  waiting: QueueItem[];
  lent: QueueItem[];
}

/** Could be lent to a helper: not streaming (LLM-4), not borrowed, not already returned (HELPER-2). */
export const lendableItem = (i: QueueItem): boolean => !i.stream && !i.borrowed && !i.returned;

export class ModelQueue {
  private readonly waiting: Waiter[] = [];
  private readonly active = new Set<QueueItem>();
  private readonly lent = new Set<QueueItem>();

  holdPolicy?: SecondSlotPolicy;

  constructor(
    readonly localId: string,
    public depth: number,
    private readonly onChange: (
      event: 'enqueued' | 'started' | 'finished' | 'lent' | 'requeued' | 'withdrawn',
    ) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Waits for this request's turn: the engine, a helper (lend), or — for borrowed work — a hand-back. `client` gone
   * while it waits: rejected (AbortError) and taken out. A `ClientGone`, not an AbortSignal: no AbortController per
   * request, and its listener goes with the wait.
   */
  enqueue(item: QueueItem, client?: ClientGone): Promise<Dispatch> {
    return new Promise((resolve, reject) => {
      if (client?.aborted) return reject(Object.assign(new Error('client closed the request'), { name: 'AbortError' }));
      let unlisten: (() => void) | undefined;
      const waiter: Waiter = {
        item,
        resolve: (d) => {
          unlisten?.();
          resolve(d);
        },
      };
      this.insert(waiter);
      unlisten = client?.onAbort(() => {
        if (this.remove(item)) {
          reject(Object.assign(new Error('client closed the request'), { name: 'AbortError' }));
          this.notify('withdrawn');
          this.pump();
        }
      });
      // The owner is topped up first (QUEUE-2); only what still waits may then be lent. LEASE-2 reports a new held
      // request: one the router keeps; a request that went straight to the engine was 'started' (one
      // decision per request fewer when nothing waits).
      this.pump();
      if (item.state !== 'active') this.notify('enqueued');
    });
  }

  /** Tells the owner side; a failure there never leaves the queue half-updated. */
  private notify(event: Parameters<ModelQueue['onChange']>[0]) {
    try {
      this.onChange(event);
    } catch {
      /* the owner side logs its own errors */
    }
  }

  /** Own work first, then by first arrival (QUEUE-4, QUEUE-5). */
  private insert(w: Waiter) {
    const before = (a: QueueItem, b: QueueItem) =>
      a.borrowed !== b.borrowed ? !a.borrowed : a.arrivedAt < b.arrivedAt;
    const i = this.waiting.findIndex((x) => before(w.item, x.item));
    if (i < 0) this.waiting.push(w);
    else this.waiting.splice(i, 0, w);
  }

  private remove(item: QueueItem): boolean {
    const i = this.waiting.findIndex((w) => w.item === item);
    if (i < 0) return false;
    this.waiting.splice(i, 1);
    return true;
  }

  /** Tops the engine back up to the depth from the waiting requests (QUEUE-2: the owner is always topped up). */
  pump(): void {
    while (this.active.size < this.depth) {
      // A request held for a faster helper keeps the second slot's turn, and only that slot's (HOLD-2): the third and
      // later ones fill as usual meanwhile. It goes to the owner as soon as the owner would otherwise idle.
      const held = this.active.size > 0 && this.waiting.some((w) => w.item.state === 'held');
      if (held && this.active.size + 1 >= this.depth) break;
      const next = held ? this.waiting.find((w) => w.item.state !== 'held') : this.waiting[0];
      if (!next) break;
      // Only a request that could be lent is ever held for the helper (HOLD-1): a stream, a borrowed request or one
      // that came back from a helper goes to the engine.
      if (!held && this.active.size === 1 && lendableItem(next.item) && this.holdPolicy) {
        const first = [...this.active][0];
        if (this.holdPolicy(next.item, first.startedAt ?? this.now())) {
          next.item.state = 'held';
          break; // only the second slot, and the owner never stops generating
        }
      }
      this.remove(next.item);
      next.item.state = 'active';
      next.item.startedAt = this.now();
      this.active.add(next.item);
      next.resolve({ kind: 'engine' });
      this.notify('started');
    }
  }

  /** A request at the engine finished: its slot goes to the next one. */
  finished(item: QueueItem): void {
    if (this.active.delete(item)) {
      this.pump();
      this.notify('finished');
    }
  }

  /** Waiting requests that may be lent: not streaming (LLM-4), not borrowed, not already returned (HELPER-2). */
  lendable(): QueueItem[] {
    return this.waiting.filter((w) => lendableItem(w.item)).map((w) => w.item);
  }

  /**
   * Withdraws a waiting request for a helper. The owner is topped back up at once (QUEUE-2): a held request that
   * leaves frees the second slot's turn for the next waiting one.
   */
  lend(item: QueueItem, lease: unknown): boolean {
    const w = this.waiting.find((x) => x.item === item);
    if (!w || !lendableItem(item)) return false;
    this.remove(item);
    item.state = 'lent';
    item.startedAt = this.now();
    this.lent.add(item);
    w.resolve({ kind: 'lend', lease });
    this.pump();
    this.notify('lent');
    return true;
  }

  /** Hands back one borrowed request still waiting here (HOLD-4, HELPER-5: its owner withdrew it); false when it does not wait here. */
  returnOne(id: string, reason: string): boolean {
    const w = this.waiting.find((x) => x.item.borrowed && x.item.id === id);
    if (!w) return false;
    this.remove(w.item);
    w.resolve({ kind: 'returned', reason });
    this.notify('withdrawn');
    return true;
  }

  /** A lent request is over (answered through the helper, or about to be re-queued). */
  lentDone(item: QueueItem): void {
    this.lent.delete(item);
  }

  /** A request came back from a helper (409 offload_returned, relay refused): it waits again with its first arrival. */
  requeue(item: QueueItem, client?: ClientGone): Promise<Dispatch> {
    this.lent.delete(item);
    item.state = 'queued';
    item.lentTo = undefined;
    item.returned = true;
    return this.enqueue(item, client);
  }

  /** Releases every request held for a faster helper back to the queue (HOLD-2/3); returns how many. */
  releaseHeld(): number {
    const held = this.waiting.filter((w) => w.item.state === 'held');
    for (const w of held) w.item.state = 'queued';
    if (held.length) this.pump();
    return held.length;
  }

  /** Hands back every borrowed request still waiting (HELPER-1/2); returns them. */
  returnBorrowed(reason: string): QueueItem[] {
    const back = this.waiting.filter((w) => w.item.borrowed);
    for (const w of back) {
      this.remove(w.item);
      w.resolve({ kind: 'returned', reason });
    }
    if (back.length) this.notify('withdrawn');
    return back.map((w) => w.item);
  }

  /** 1-based place of a request among the waiting ones (own before borrowed, then first arrival); null once it no longer waits. */
  position(item: QueueItem): number | null {
    const i = this.waiting.findIndex((w) => w.item === item);
    return i < 0 ? null : i + 1;
  }

  get activeCount(): number {
    return this.active.size;
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  get lentCount(): number {
    return this.lent.size;
  }

  /** Lent requests out at one helper (`node/model`): a lease's slots count only those at its own helper. */
  lentAt(helper: string): number {
    let n = 0;
    for (const i of this.lent) if (i.lentTo?.helper === helper) n++;
    return n;
  }

  ownWaiting(): number {
    return this.waiting.filter((w) => !w.item.borrowed).length;
  }

  borrowedActive(): number {
    return [...this.active].filter((i) => i.borrowed).length;
  }

  borrowedWaiting(): number {
    return this.waiting.filter((w) => w.item.borrowed).length;
  }

  view(): QueueView {
    return {
      depth: this.depth,
      active: [...this.active],
      waiting: this.waiting.map((w) => w.item),
      lent: [...this.lent],
    };
  }
}

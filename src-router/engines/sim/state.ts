/** Tokens held by one KV cache page. */
export const KV_PAGE_TOKENS = 16;

/** Upper bounds of the queue-wait histogram, in seconds (+Inf is implied). */
export const QUEUE_WAIT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] as const;

export interface Histogram {
  readonly bounds: readonly number[];
  /** Non-cumulative counts per bound; the last cell is +Inf. */
  readonly counts: number[];
  sum: number;
  count: number;
}

export function observe(histogram: Histogram, value: number): void {
  let i = histogram.bounds.findIndex((bound) => value <= bound);
  if (i < 0) i = histogram.bounds.length;
  histogram.counts[i] += 1;
  histogram.sum += value;
  histogram.count += 1;
}

/** A request holding one of the engine's parallel slots. */
export class Slot {
  /** Tokens this request keeps in the KV cache (prompt + generated so far). */
  tokens = 0;
  private released = false;

  constructor(private readonly onRelease: (slot: Slot) => void) {}

  release(): void {
    if (this.released) return;
    this.released = true;
    this.onRelease(this);
  }
}

interface Waiter {
  since: number;
  resolve: (slot: Slot) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

export interface Counters {
  requests: number;
  completed: number;
  cancelled: number;
  failed: number;
}

/** Slots, the FIFO of requests waiting for one, counters and the KV page gauge of one engine. */
export class EngineState {
  readonly counters: Counters = { requests: 0, completed: 0, cancelled: 0, failed: 0 };
  readonly queueWait: Histogram = {
    bounds: QUEUE_WAIT_BUCKETS,
    counts: new Array(QUEUE_WAIT_BUCKETS.length + 1).fill(0),
    sum: 0,
    count: 0,
  };
  private readonly active = new Set<Slot>();
  private readonly waiting: Waiter[] = [];

  constructor(
    readonly parallel: number,
    readonly kvPages: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get activeCount(): number {
    return this.active.size;
  }

  get queuedCount(): number {
    return this.waiting.length;
  }

  get kvPagesUsed(): number {
    let pages = 0;
    for (const slot of this.active) pages += Math.ceil(slot.tokens / KV_PAGE_TOKENS);
    return Math.min(this.kvPages, pages);
  }

  get kvPagesFree(): number {
    return this.kvPages - this.kvPagesUsed;
  }

  /** Resolves with a slot when one is free (FIFO); rejects with the signal's reason if aborted while waiting. */
  acquire(signal: AbortSignal): Promise<Slot> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.active.size < this.parallel && this.waiting.length === 0) {
      observe(this.queueWait, 0);
      return Promise.resolve(this.grant());
    }
    return new Promise<Slot>((resolve, reject) => {
      const waiter: Waiter = {
        since: this.now(),
        resolve,
        reject,
        signal,
        onAbort: () => {
          const i = this.waiting.indexOf(waiter);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal.reason);
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private grant(): Slot {
    const slot = new Slot((s) => {
      this.active.delete(s);
      this.dispatch();
    });
    this.active.add(slot);
    return slot;
  }

  private dispatch(): void {
    while (this.active.size < this.parallel && this.waiting.length > 0) {
      const waiter = this.waiting.shift()!;
      waiter.signal.removeEventListener('abort', waiter.onAbort);
      observe(this.queueWait, (this.now() - waiter.since) / 1000);
      waiter.resolve(this.grant());
    }
  }
}

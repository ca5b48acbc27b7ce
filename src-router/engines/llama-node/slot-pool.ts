/** A fixed set of slots (context sequences) handed out first come, first served; waiters can give up. */

export class SlotAbortedError extends Error {
  constructor(reason?: unknown) {
    super(reason instanceof Error ? reason.message : 'aborted while queued');
    this.name = 'SlotAbortedError';
  }
}

interface Waiter<T> {
  resolve: (slot: T) => void;
  reject: (err: Error) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class SlotPool<T> {
  private readonly free: T[];
  private readonly waiters: Waiter<T>[] = [];
  private closed: Error | undefined;

  constructor(private readonly slots: readonly T[]) {
    this.free = [...slots];
  }

  get size(): number {
    return this.slots.length;
  }
  get active(): number {
    return this.slots.length - this.free.length;
  }
  get queued(): number {
    return this.waiters.length;
  }

  /** A free slot now, or the next one released after every earlier waiter got theirs. */
  acquire(signal?: AbortSignal): Promise<T> {
    if (this.closed) return Promise.reject(this.closed);
    if (signal?.aborted) return Promise.reject(new SlotAbortedError(signal.reason));
    const slot = this.waiters.length === 0 ? this.free.shift() : undefined;
    if (slot !== undefined) return Promise.resolve(slot);
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = { resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(new SlotAbortedError(signal.reason));
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
    });
  }

  release(slot: T): void {
    if (!this.slots.includes(slot) || this.free.includes(slot)) throw new Error('released a slot that is not in use');
    const next = this.waiters.shift();
    if (!next) {
      this.free.push(slot);
      return;
    }
    if (next.onAbort) next.signal?.removeEventListener('abort', next.onAbort);
    next.resolve(slot);
  }

  /** Runs `work` holding a slot, releasing it however `work` ends. */
  async with<R>(signal: AbortSignal | undefined, work: (slot: T) => Promise<R>): Promise<R> {
    const slot = await this.acquire(signal);
    try {
      return await work(slot);
    } finally {
      this.release(slot);
    }
  }

  /** Rejects every waiter and every later acquire. */
  close(reason = new Error('engine is shutting down')): void {
    this.closed = reason;
    for (const w of this.waiters.splice(0)) {
      if (w.onAbort) w.signal?.removeEventListener('abort', w.onAbort);
      w.reject(reason);
    }
  }
}

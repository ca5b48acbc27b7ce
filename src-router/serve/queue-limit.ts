import { RouterError } from './errors';

/**
 * Bounded waiting. A local model's requests in flight beyond what its engine generates at once (its
 * `parallel`, 1 by default) are waiting — in a router queue, for the lane, or inside the engine. Beyond a model's
 * `max_queue` waiting, or `server.max_queue` waiting on the whole node, a request is refused at once with 429 and a
 * Retry-After, never left to wait without bound.
 */
export class QueueLimit {
  private waitingTotal = 0;
  private readonly inflight = new Map<string, number>();

  constructor(
    private readonly nodeMax: number,
    private readonly model: (localId: string) => { maxQueue: number | null; parallel: number },
  ) {}

  private waitingOf(localId: string, inflight: number): number {
    return Math.max(0, inflight - this.model(localId).parallel);
  }

  /** Counts one request of `localId` until the returned function is called (once), or throws 429 at a bound. */
  enter(localId: string, publicId: string): () => void {
    const n = this.inflight.get(localId) ?? 0;
    const { maxQueue } = this.model(localId);
    const waiting = this.waitingOf(localId, n);
    const adds = this.waitingOf(localId, n + 1) - waiting;
    if (adds > 0 && maxQueue !== null && waiting >= maxQueue)
      throw queueFull(`model '${publicId}' already has ${waiting} requests waiting (its max_queue)`, waiting);
    if (adds > 0 && this.waitingTotal >= this.nodeMax)
      throw queueFull(
        `this node already has ${this.waitingTotal} requests waiting (server.max_queue)`,
        this.waitingTotal,
      );
    this.inflight.set(localId, n + 1);
    this.waitingTotal += adds;
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      const m = this.inflight.get(localId) ?? 1;
      this.waitingTotal -= this.waitingOf(localId, m) - this.waitingOf(localId, m - 1);
      if (m > 1) this.inflight.set(localId, m - 1);
      else this.inflight.delete(localId);
    };
  }

  /** Requests waiting on the node (or for one model). */
  waiting(localId?: string): number {
    return localId === undefined ? this.waitingTotal : this.waitingOf(localId, this.inflight.get(localId) ?? 0);
  }
}

/** 429 with a Retry-After hint: a second per 50 waiting requests, at least one (a coarse drain estimate). */
function queueFull(why: string, waiting: number): RouterError {
  return new RouterError(
    429,
    'queue_full',
    `too many requests waiting: ${why}; retry later`,
    'rate_limit_error',
    null,
    { retry_after: String(Math.max(1, Math.ceil(waiting / 50))) },
  );
}

/**
 * Tracks this node's own work: how many of its own requests and its own loads run now, since when it has been idle
 * (PROBE-3: own requests and any load it does for itself, a restore after borrowing included, count as busy;
 * borrowed work does not) and since when it last served a request of its own (PRICE-7: a load is not a request).
 */
export class ActivityTracker {
  private requests = 0;
  private loads = 0;
  private idleSince: number;
  private lastOwnEnd: number | null = null;

  constructor(private readonly now: () => number = Date.now) {
    this.idleSince = now();
  }

  /** Marks one own request started; the returned function marks it finished. */
  begin(): () => void {
    return this.mark('request');
  }

  /** Marks a load the node does for itself (a restore after borrowing): busy for idleness, not a request. */
  beginLoad(): () => void {
    return this.mark('load');
  }

  private mark(kind: 'request' | 'load'): () => void {
    if (kind === 'request') this.requests++;
    else this.loads++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (kind === 'request') {
        this.requests--;
        this.lastOwnEnd = this.now();
      } else {
        this.loads--;
      }
      if (this.requests + this.loads === 0) this.idleSince = this.now();
    };
  }

  /** Time since an own request last ended (0 while one runs), null when there was none yet (PRICE-7). */
  sinceOwnRequestMs(): number | null {
    if (this.requests > 0) return 0;
    return this.lastOwnEnd === null ? null : this.now() - this.lastOwnEnd;
  }

  /** Time since own work (requests and own loads) last ended; 0 while some runs (PROBE-3). */
  idleMs(): number {
    return this.requests + this.loads > 0 ? 0 : this.now() - this.idleSince;
  }
}

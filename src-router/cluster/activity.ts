/** Tracks this node's own work: how many requests run now and since when it has been idle (runtime status, probes later). */
export class ActivityTracker {
  private active = 0;
  private idleSince: number;
  private lastOwnEnd: number | null = null;

  constructor(private readonly now: () => number = Date.now) {
    this.idleSince = now();
  }

  /** Marks one request started; the returned function marks it finished. */
  begin(): () => void {
    this.active++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.active--;
      this.lastOwnEnd = this.now();
      if (this.active === 0) this.idleSince = this.now();
    };
  }

  /** Time since own work last ended (0 while some runs), null when there was none yet (PRICE-7). */
  sinceOwnRequestMs(): number | null {
    if (this.active > 0) return 0;
    return this.lastOwnEnd === null ? null : this.now() - this.lastOwnEnd;
  }

  idleMs(): number {
    return this.active > 0 ? 0 : this.now() - this.idleSince;
  }
}

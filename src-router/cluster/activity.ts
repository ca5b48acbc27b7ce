/** Tracks this node's own work: how many requests run now and since when it has been idle (runtime status, probes later). */
export class ActivityTracker {
  private active = 0;
  private idleSince: number;

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
      if (this.active === 0) this.idleSince = this.now();
    };
  }

  idleMs(): number {
    return this.active > 0 ? 0 : this.now() - this.idleSince;
  }
}

/**
 * The replay's simulated clock: an injected time that only moves when the next scheduled event runs. No sleeps,
 * no wall-clock reads. Events run in time order; events due at the same time run in the order they were scheduled
 * (FIFO ties), so a replay is deterministic. Bounded: `run` stops after `maxEvents` and says so.
 */

interface Entry {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

export interface RunResult {
  events: number;
  /** The event cap was reached before the queue emptied. */
  capped: boolean;
}

export class SimClock {
  private t: number;
  private seq = 0;
  private readonly heap: Entry[] = [];
  private ran = 0;

  constructor(start: number) {
    this.t = start;
  }

  /** The simulated time now (unix ms). */
  now = (): number => this.t;

  /** Runs `fn` at `at` (a time in the past runs at the current time, never earlier); returns its cancel. */
  at(at: number, fn: () => void): () => void {
    const e: Entry = { at: Math.max(this.t, Number.isFinite(at) ? at : this.t), seq: this.seq++, fn, cancelled: false };
    this.push(e);
    return () => {
      e.cancelled = true;
    };
  }

  /** Runs `fn` after `ms` of simulated time. */
  after = (fn: () => void, ms: number): (() => void) => this.at(this.t + Math.max(0, ms), fn);

  get pending(): number {
    return this.heap.filter((e) => !e.cancelled).length;
  }

  get eventsRun(): number {
    return this.ran;
  }

  /** Runs events in order until none is left, the next is after `until`, or `maxEvents` have run in this call. */
  run(maxEvents: number, until = Infinity): RunResult {
    let n = 0;
    while (this.heap.length) {
      const top = this.heap[0];
      if (top.cancelled) {
        this.pop();
        continue;
      }
      if (top.at > until) break;
      if (n >= maxEvents) return { events: n, capped: true };
      this.pop();
      this.t = top.at;
      n++;
      this.ran++;
      top.fn();
    }
    return { events: n, capped: false };
  }

  private less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(e: Entry) {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  private pop(): Entry | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l], h[m])) m = l;
        if (r < h.length && this.less(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}

/**
 * Rows queued in memory and written in batches off the caller's stack, one transaction per flush, with pruning by
 * retention: the engine of the decision log's writer (LOG-1) and of the request/load analytics.
 */

export interface BatchedWriterOptions {
  /** Rows older than this are pruned (the owner's `prune` decides what "older" means); 0 or less keeps everything. */
  retentionMs: number;
  /** The clock pruning uses. Default Date.now. */
  now?: () => number;
  /** Flush this long after the first queued row (default 250 ms). */
  flushIntervalMs?: number;
  /** Flush as soon as this many rows are queued (default 500). */
  batchSize?: number;
  /** Past this many unwritten rows the oldest are dropped and counted (default 50 000). */
  maxQueued?: number;
  /** Prune at most this often (default one hour). */
  pruneIntervalMs?: number;
  /** False: no timers at all, the owner calls flush() (tests, tools). Default true. */
  autoFlush?: boolean;
  /** A flush or prune failed (the node logs it); the failed rows are counted in `stats().failed`. */
  onError?: (err: Error) => void;
}

export interface BatchedWriterStats {
  /** Queued, not yet written. */
  pending: number;
  written: number;
  /** Dropped unwritten because the queue passed `maxQueued` (or added after close). */
  dropped: number;
  /** Could not be written (SQLite refused them). */
  failed: number;
  /** Flushes that wrote at least one row (each one transaction). */
  flushes: number;
  pruned: number;
  lastPruneAt: number | null;
}

/** What one batch write did: rows written, rows refused, the first refusal. */
export interface BatchResult {
  ok: number;
  failed: number;
  firstError: Error | null;
}

/** The storage side of a batched writer. */
export interface BatchSink<T> {
  /** Writes the rows (one transaction); a refused row must not stop the others. */
  write(rows: T[]): BatchResult;
  /** Deletes what is older than `retentionMs` before `now`; returns how many rows. */
  prune(retentionMs: number, now: number): number;
}

export const BATCH_DEFAULTS = { flushIntervalMs: 250, batchSize: 500, maxQueued: 50_000, pruneIntervalMs: 3_600_000 };

/**
 * Runs `fn(row)` for each row (call it inside the batch's transaction); a row whose statement throws is counted and
 * skipped: SQLite undoes only that statement, the rest of the batch still commits.
 */
export function eachRowCounted<T>(rows: T[], fn: (row: T) => void): BatchResult {
  let ok = 0;
  let failed = 0;
  let firstError: Error | null = null;
  for (const row of rows) {
    try {
      fn(row);
      ok++;
    } catch (err) {
      failed++;
      firstError ??= err as Error;
    }
  }
  return { ok, failed, firstError };
}

/**
 * Queues rows and writes them in batches: `flushIntervalMs` after the first queued row or as soon as `batchSize`
 * are queued, from unref'd timers (never on the caller's stack); prunes on flush when `pruneIntervalMs` has passed
 * (and on its own timer). `add` never blocks or throws; `close` writes what is queued.
 */
export class BatchedWriter<T> {
  private queue: T[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly counts = { written: 0, dropped: 0, failed: 0, flushes: 0, pruned: 0 };
  private lastPruneAt: number | null = null;
  private readonly opts: Required<Omit<BatchedWriterOptions, 'onError'>> & Pick<BatchedWriterOptions, 'onError'>;

  constructor(
    private readonly sink: BatchSink<T>,
    options: BatchedWriterOptions,
  ) {
    this.opts = { ...BATCH_DEFAULTS, now: Date.now, autoFlush: true, ...options };
    if (this.opts.autoFlush) {
      this.pruneTimer = setInterval(() => this.flush(), this.opts.pruneIntervalMs);
      this.pruneTimer.unref();
    }
  }

  /** Queues one row; never blocks or throws. */
  add(row: T): void {
    if (this.closed) {
      this.counts.dropped++;
      return;
    }
    this.queue.push(row);
    if (this.pending > this.opts.maxQueued) {
      this.head++; // drop the oldest unwritten row
      this.counts.dropped++;
      if (this.head > 1024 && this.head * 2 > this.queue.length) this.compact();
    }
    this.schedule();
  }

  get pending(): number {
    return this.queue.length - this.head;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  stats(): BatchedWriterStats {
    return { pending: this.pending, ...this.counts, lastPruneAt: this.lastPruneAt };
  }

  /** Writes every queued row in one transaction (and prunes when due); returns how many were written. */
  flush(): number {
    this.clearFlushTimers();
    const rows = this.head ? this.queue.slice(this.head) : this.queue;
    this.queue = [];
    this.head = 0;
    let ok = 0;
    if (rows.length) {
      try {
        const r = this.sink.write(rows);
        ok = r.ok;
        this.counts.failed += r.failed;
        if (r.firstError) this.report(r.firstError);
      } catch (err) {
        this.counts.failed += rows.length;
        this.report(err as Error);
      }
      this.counts.written += ok;
      this.counts.flushes++;
    }
    this.maybePrune();
    return ok;
  }

  /** Deletes rows older than `retentionMs` (default the configured retention) before `now`. */
  prune(retentionMs: number = this.opts.retentionMs, now: number = this.opts.now()): number {
    const n = retentionMs > 0 ? this.sink.prune(retentionMs, now) : 0;
    this.counts.pruned += n;
    this.lastPruneAt = now;
    return n;
  }

  /** Shutdown: stops the timers and writes what is queued. Rows added later are dropped (counted). */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.pruneTimer = null;
  }

  private maybePrune() {
    const now = this.opts.now();
    if (this.lastPruneAt !== null && now - this.lastPruneAt < this.opts.pruneIntervalMs) return;
    try {
      this.prune(this.opts.retentionMs, now);
    } catch (err) {
      this.lastPruneAt = now;
      this.report(err as Error);
    }
  }

  private schedule() {
    if (!this.opts.autoFlush) return;
    if (this.pending >= this.opts.batchSize) {
      if (!this.immediate) {
        this.immediate = setImmediate(() => this.flush());
        this.immediate.unref();
      }
    } else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.opts.flushIntervalMs);
      this.timer.unref();
    }
  }

  private clearFlushTimers() {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
  }

  private compact() {
    this.queue = this.queue.slice(this.head);
    this.head = 0;
  }

  private report(err: Error) {
    try {
      this.opts.onError?.(err);
    } catch {
      // the error reporter must not break the writer
    }
  }
}

/**
 * The decision log's writer (LOG-1): rows are queued in memory and written in batches off the request path, one
 * transaction per flush, stamped with the writing node and router version; old rows are pruned after the retention.
 */
import { ROUTER_VERSION } from '../version';
import type { Db } from './db';
import { completeDecision, DECISION_COLUMNS, DECISION_FIELDS, toDbParams, type DecisionDraft, type DecisionInput } from './decision-log-row';

export interface DecisionLogWriterOptions {
  /** Stamped on every row as `node_id`. */
  nodeId: string;
  /** Stamped on every row as `router_version`; default the running build's. */
  routerVersion?: string;
  /** `cluster.offload_decisions_retention` in ms; 0 or less keeps everything. */
  retentionMs: number;
  /** The clock pruning uses (rows carry their own `at`). Default Date.now. */
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

export interface DecisionLogStats {
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

const DEFAULTS = { flushIntervalMs: 250, batchSize: 500, maxQueued: 50_000, pruneIntervalMs: 3_600_000 };

/** Deletes rows older than `retentionMs` before `now`; returns how many. */
export function pruneDecisions(db: Db, retentionMs: number, now: number): number {
  if (!(retentionMs > 0)) return 0;
  return db.prepare('DELETE FROM offload_decisions WHERE at < ?').run(now - retentionMs).changes;
}

export class DecisionLogWriter {
  private queue: DecisionInput[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly counts = { written: 0, dropped: 0, failed: 0, flushes: 0, pruned: 0 };
  private lastPruneAt: number | null = null;
  private readonly opts: Required<Omit<DecisionLogWriterOptions, 'onError'>> & Pick<DecisionLogWriterOptions, 'onError'>;
  private readonly writeBatch: (rows: DecisionInput[]) => { ok: number; failed: number; firstError: Error | null };

  constructor(
    private readonly db: Db,
    options: DecisionLogWriterOptions,
  ) {
    this.opts = { ...DEFAULTS, routerVersion: ROUTER_VERSION, now: Date.now, autoFlush: true, ...options };
    const cols = DECISION_FIELDS.filter((f) => f !== 'id').map((f) => DECISION_COLUMNS[f]);
    const insert = db.prepare(`INSERT INTO offload_decisions (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`);
    const { nodeId, routerVersion } = this.opts;
    this.writeBatch = db.transaction((rows: DecisionInput[]) => {
      let ok = 0;
      let failed = 0;
      let firstError: Error | null = null;
      for (const row of rows) {
        try {
          insert.run(toDbParams(row, nodeId, routerVersion));
          ok++;
        } catch (err) {
          // A refused row (constraint) aborts only its own statement; the rest of the batch still commits.
          failed++;
          firstError ??= err as Error;
        }
      }
      return { ok, failed, firstError };
    });
    if (this.opts.autoFlush) {
      this.pruneTimer = setInterval(() => this.flush(), this.opts.pruneIntervalMs);
      this.pruneTimer.unref();
    }
  }

  /** Queues one decision; never blocks or throws (satisfies lending's DecisionSink). */
  add(row: DecisionDraft): void {
    if (this.closed) {
      this.counts.dropped++;
      return;
    }
    this.queue.push(completeDecision(row));
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

  stats(): DecisionLogStats {
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
        const r = this.writeBatch(rows);
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
    const n = pruneDecisions(this.db, retentionMs, now);
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

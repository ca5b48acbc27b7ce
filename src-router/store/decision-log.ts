/**
 * The decision log's writer (LOG-1): rows are queued in memory and written in batches off the request path, one
 * transaction per flush, stamped with the writing node and router version; old rows are pruned after the retention.
 */
import { ROUTER_VERSION } from '../version';
import { BatchedWriter, type BatchedWriterOptions, type BatchedWriterStats, eachRowCounted } from './batched-writer';
import type { Db } from './db';
import {
  completeDecision,
  DECISION_COLUMNS,
  DECISION_FIELDS,
  type DecisionDraft,
  type DecisionInput,
  toDbParams,
} from './decision-log-row';

export interface DecisionLogWriterOptions extends BatchedWriterOptions {
  /** Stamped on every row as `node_id`. */
  nodeId: string;
  /** Stamped on every row as `router_version`; default the running build's. */
  routerVersion?: string;
  /** `cluster.offload_decisions_retention` in ms; 0 or less keeps everything. */
  retentionMs: number;
  /** Called with every row once its batch is committed (the node's metrics count the log's rows here). */
  observe?: (row: DecisionInput) => void;
}

export type DecisionLogStats = BatchedWriterStats;

/** Deletes rows older than `retentionMs` before `now`; returns how many. */
export function pruneDecisions(db: Db, retentionMs: number, now: number): number {
  if (!(retentionMs > 0)) return 0;
  return db.prepare('DELETE FROM offload_decisions WHERE at < ?').run(now - retentionMs).changes;
}

export class DecisionLogWriter {
  private readonly writer: BatchedWriter<DecisionInput>;
  private readonly observe?: (row: DecisionInput) => void;

  constructor(db: Db, options: DecisionLogWriterOptions) {
    const { nodeId, routerVersion = ROUTER_VERSION, observe, ...batching } = options;
    this.observe = observe;
    const cols = DECISION_FIELDS.filter((f) => f !== 'id').map((f) => DECISION_COLUMNS[f]);
    const insert = db.prepare(
      `INSERT INTO offload_decisions (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`,
    );
    const insertAll = db.transaction((rows: DecisionInput[], written: DecisionInput[]) =>
      eachRowCounted(rows, (row) => {
        insert.run(toDbParams(row, nodeId, routerVersion));
        written.push(row);
      }),
    );
    // Rows are observed after their transaction commits: a row dropped from the queue, refused by SQLite or rolled
    // back with its batch is never counted.
    const write = (rows: DecisionInput[]) => {
      const written: DecisionInput[] = [];
      const result = insertAll(rows, written);
      if (observe) for (const row of written) this.observeRow(row);
      return result;
    };
    this.writer = new BatchedWriter(
      { write, prune: (retentionMs, now) => pruneDecisions(db, retentionMs, now) },
      batching,
    );
  }

  /** Queues one decision; never blocks or throws (satisfies lending's DecisionSink). */
  add(row: DecisionDraft): void {
    this.writer.add(completeDecision(row));
  }

  private observeRow(row: DecisionInput): void {
    try {
      this.observe?.(row);
    } catch {
      // counting never stops a decision from being logged
    }
  }

  get pending(): number {
    return this.writer.pending;
  }

  stats(): DecisionLogStats {
    return this.writer.stats();
  }

  /** Writes every queued row in one transaction (and prunes when due); returns how many were written. */
  flush(): number {
    return this.writer.flush();
  }

  /** Deletes rows older than `retentionMs` (default the configured retention) before `now`. */
  prune(retentionMs?: number, now?: number): number {
    return this.writer.prune(retentionMs, now);
  }

  /** Shutdown: stops the timers and writes what is queued. Rows added later are dropped (counted). */
  close(): void {
    this.writer.close();
  }
}

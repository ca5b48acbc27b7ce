import {
  BatchedWriter,
  type BatchedWriterOptions,
  type BatchedWriterStats,
  type BatchResult,
  eachRowCounted,
} from './batched-writer';
import type { Db } from './db';
import { RecentRequests } from './recent-requests';

export type RequestEndpoint = 'chat' | 'completion' | 'embedding' | 'image' | 'transcription';
/** `returned`: borrowed work handed back to its owner unstarted (HELPER-1) — not a failure. */
export type RequestOutcome = 'ok' | 'error' | 'cancelled' | 'returned';
export type RequestServiceSource = 'engine' | 'derived' | 'unknown';

/** One finished request, with the measure of work it did. */
/** GUARD-2: why a guardian answered. */
export type GuardianReason = 'detected' | 'engine_refused';

export interface RequestRow {
  finishedAt: number;
  nodeId: string;
  model: string;
  localId: string;
  backend: string;
  endpoint: RequestEndpoint;
  streamed: boolean;
  promptBytes?: number | null;
  /** Prompt tokens the engine reported (usage), for the bytes-per-token profile (LLM-3). */
  promptTokens?: number | null;
  tokensGenerated?: number | null;
  imagePixels?: number | null;
  imageSteps?: number | null;
  imageCount?: number | null;
  audioSeconds?: number | null;
  queueWaitMs: number;
  /** Raw: arrival at this node to the end of the answer. */
  durationMs: number;
  /**
   * PRICE-2: the time the engine spent on this job alone (cost fits use it): the engine's own report where it gives
   * one, else derived from the runtime's order (finish − max(dispatch, previous job's finish)). Null when unknown.
   */
  serviceMs?: number | null;
  /** `engine` (reported timings), `derived`, `unknown` (neither could be measured); null on rows from before. */
  serviceSource?: RequestServiceSource | null;
  /** The derived value, kept beside an engine-reported one as a cross-check. */
  derivedServiceMs?: number | null;
  outcome: RequestOutcome;
  status?: number | null;
  error?: string | null;
  /** GUARD-2: a guardian answered this request for that text-only model (`node/localId`). */
  guardianFor?: string | null;
  /** Why: an image was detected in the request, or the model's engine refused it. */
  guardianReason?: GuardianReason | null;
  /** The request's id (the router queue and decision rows name it); null on rows from before. */
  requestId?: string | null;
  /** A borrowed request, on its helper: the owner it was lent from (`node/model`). */
  lentFrom?: string | null;
}

/** One engine load attempt. */
export interface LoadRow {
  finishedAt: number;
  nodeId: string;
  model: string;
  localId: string;
  backend: string;
  lane: string;
  durationMs: number;
  success: boolean;
  displacedLocalId?: string | null;
  error?: string | null;
}

export interface AnalyticsStoreOptions extends Omit<BatchedWriterOptions, 'retentionMs'> {
  /** Rows whose `finished_at` is older than this are pruned (the node passes `cluster.offload_decisions_retention`); 0 or absent keeps everything. */
  retentionMs?: number;
}

/** A queued analytics row, already in its column form. */
type AnalyticsItem = { table: 'request'; params: unknown[] } | { table: 'load'; params: Record<string, unknown> };

/** The request_analytics columns, in insert order, each with the RequestRow field it takes. */
const REQUEST_COLUMNS: readonly (readonly [string, keyof RequestRow])[] = [
  ['finished_at', 'finishedAt'],
  ['node_id', 'nodeId'],
  ['model', 'model'],
  ['local_id', 'localId'],
  ['backend', 'backend'],
  ['endpoint', 'endpoint'],
  ['streamed', 'streamed'],
  ['prompt_bytes', 'promptBytes'],
  ['prompt_tokens', 'promptTokens'],
  ['tokens_generated', 'tokensGenerated'],
  ['image_pixels', 'imagePixels'],
  ['image_steps', 'imageSteps'],
  ['image_count', 'imageCount'],
  ['audio_seconds', 'audioSeconds'],
  ['queue_wait_ms', 'queueWaitMs'],
  ['duration_ms', 'durationMs'],
  ['service_ms', 'serviceMs'],
  ['service_source', 'serviceSource'],
  ['derived_service_ms', 'derivedServiceMs'],
  ['outcome', 'outcome'],
  ['status', 'status'],
  ['error', 'error'],
  ['guardian_for', 'guardianFor'],
  ['guardian_reason', 'guardianReason'],
  ['request_id', 'requestId'],
  ['lent_from', 'lentFrom'],
];

const rounded = (v: unknown) => (typeof v === 'number' ? Math.round(v) : null);

/** One row's parameters in REQUEST_COLUMNS order (absent fields are NULL). */
function requestParams(row: RequestRow): unknown[] {
  const out: unknown[] = new Array(REQUEST_COLUMNS.length);
  for (let i = 0; i < REQUEST_COLUMNS.length; i++) {
    const field = REQUEST_COLUMNS[i][1];
    const v = row[field];
    out[i] =
      field === 'streamed'
        ? v
          ? 1
          : 0
        : field === 'queueWaitMs' || field === 'durationMs' || field === 'serviceMs' || field === 'derivedServiceMs'
          ? rounded(v)
          : v === undefined
            ? null
            : v;
  }
  return out;
}

/** How many of a local model's newest request rows its fits and token profiles read (kept in memory once read). */
const RECENT_ROWS = 2000;

/** A row's parameters as the columns a SELECT returns them. */
function columnsOf(params: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < REQUEST_COLUMNS.length; i++) out[REQUEST_COLUMNS[i][0]] = params[i];
  return out;
}

/** Rows one multi-row INSERT takes (26 parameters each, far below SQLite's limit). */
const ROWS_PER_INSERT = 32;

/**
 * Writes request rows (call it inside the flush's transaction): up to ROWS_PER_INSERT rows per statement, one
 * statement prepared per row count (one multi-row INSERT costs about half of its rows one by one;
 * parameters are positional, as 26 named ones per row cost several times more). A statement SQLite refuses is undone
 * alone and its rows are written one by one, so one bad row never loses the others.
 */
function requestInserts(db: Db): (rows: unknown[][]) => BatchResult {
  const columns = REQUEST_COLUMNS.map((c) => c[0]).join(', ');
  const tuple = `(${REQUEST_COLUMNS.map(() => '?').join(', ')})`;
  const statements = new Map<number, ReturnType<Db['prepare']>>();
  const insert = (count: number) => {
    let s = statements.get(count);
    if (!s)
      statements.set(
        count,
        (s = db.prepare(`INSERT INTO request_analytics (${columns}) VALUES ${Array(count).fill(tuple).join(', ')}`)),
      );
    return s;
  };
  return (rows) => {
    let result: BatchResult = { ok: 0, failed: 0, firstError: null };
    for (let at = 0; at < rows.length; at += ROWS_PER_INSERT) {
      const part = rows.slice(at, at + ROWS_PER_INSERT);
      try {
        insert(part.length).run(part.flat());
        result.ok += part.length;
      } catch {
        const one = eachRowCounted(part, (row) => insert(1).run(row));
        result = {
          ok: result.ok + one.ok,
          failed: result.failed + one.failed,
          firstError: result.firstError ?? one.firstError,
        };
      }
    }
    return result;
  };
}

/** Deletes request and load rows that finished more than `retentionMs` before `now`; returns how many. */
export function pruneAnalytics(db: Db, retentionMs: number, now: number): number {
  if (!(retentionMs > 0)) return 0;
  const before = now - retentionMs;
  return db.transaction(
    () =>
      db.prepare('DELETE FROM request_analytics WHERE finished_at < ?').run(before).changes +
      db.prepare('DELETE FROM load_analytics WHERE finished_at < ?').run(before).changes,
  )();
}

/**
 * Request and load analytics: rows are queued and written in batches off the request path (one
 * transaction per flush, like the decision log), pruned after the retention, and written on `close`. Every read
 * sees every row recorded so far: queries flush first, and a local model's newest rows (cost fits, token profiles)
 * are kept in memory once read (`RecentRequests`), so a lending owner's reads on every event scan no store.
 */
export class AnalyticsStore {
  private readonly writer: BatchedWriter<AnalyticsItem>;
  private readonly recent = new RecentRequests(RECENT_ROWS);
  /** A load was recorded since `loadsFor` last flushed. */
  private loadQueued = false;

  constructor(
    private readonly db: Db,
    /** This node's id: its own fits read only the rows of requests it served itself. */
    private readonly nodeId?: string,
    options: AnalyticsStoreOptions = {},
  ) {
    const insertRequests = requestInserts(db);
    const insertLoad = db.prepare(`INSERT INTO load_analytics
      (finished_at, node_id, model, local_id, backend, lane, duration_ms, success, displaced_local_id, error)
      VALUES (@finishedAt, @nodeId, @model, @localId, @backend, @lane, @durationMs, @success, @displacedLocalId, @error)`);
    const write = db.transaction((items: AnalyticsItem[]) => {
      const requests = items.filter((i) => i.table === 'request').map((i) => i.params as unknown[]);
      const loads = eachRowCounted(
        items.filter((i) => i.table === 'load'),
        (i) => insertLoad.run(i.params),
      );
      const r = insertRequests(requests);
      return { ok: r.ok + loads.ok, failed: r.failed + loads.failed, firstError: r.firstError ?? loads.firstError };
    });
    // Pruning drops the same rows from the ones kept in memory.
    const prune = (retentionMs: number, now: number) => {
      if (retentionMs > 0) this.recent.prune(now - retentionMs);
      return pruneAnalytics(db, retentionMs, now);
    };
    this.writer = new BatchedWriter({ write, prune }, { ...options, retentionMs: options.retentionMs ?? 0 });
  }

  /** Queues one finished request; never blocks or throws. */
  recordRequest(row: RequestRow): void {
    const params = requestParams(row);
    this.writer.add({ table: 'request', params });
    if (row.nodeId === (this.nodeId ?? '') && this.recent.keeps(row.localId))
      this.recent.add(toRequestRow(columnsOf(params)));
  }

  /** Queues one load attempt; never blocks or throws. */
  recordLoad(row: LoadRow): void {
    this.loadQueued = true;
    this.writer.add({
      table: 'load',
      params: {
        displacedLocalId: null,
        error: null,
        ...row,
        success: row.success ? 1 : 0,
        durationMs: Math.round(row.durationMs),
      },
    });
  }

  /** Writes what is queued (one transaction) and prunes when due; returns how many rows were written. */
  flush(): number {
    return this.writer.flush();
  }

  /** Deletes rows older than `retentionMs` (default the configured retention) before `now`. */
  prune(retentionMs?: number, now?: number): number {
    return this.writer.prune(retentionMs, now);
  }

  get pending(): number {
    return this.writer.pending;
  }

  stats(): BatchedWriterStats {
    return this.writer.stats();
  }

  /** Shutdown: writes what is queued and stops the timers; rows recorded later are dropped (counted). */
  close(): void {
    this.writer.close();
  }

  /** Requests of one public model since `sinceMs`, oldest first (cost fits read these). */
  requestsFor(model: string, sinceMs = 0): RequestRow[] {
    this.writer.flush();
    return (
      this.db
        .prepare('SELECT * FROM request_analytics WHERE model = ? AND finished_at >= ? ORDER BY id')
        .all(model, sinceMs) as Record<string, unknown>[]
    ).map(toRequestRow);
  }

  /**
   * The newest `limit` requests served by one local config since `sinceMs`, oldest first (this node's own cost fits
   * and token profiles: a bounded sample, however busy the model has been).
   */
  requestsForLocal(localId: string, sinceMs = 0, limit = RECENT_ROWS): RequestRow[] {
    if (limit > this.recent.capacity) return this.queryLocal(localId, sinceMs, limit);
    // Kept in memory once read: a lending owner reads them on every event.
    return this.recent.read(localId, sinceMs, limit, () => this.queryLocal(localId, 0, this.recent.capacity));
  }

  private queryLocal(localId: string, sinceMs: number, limit: number): RequestRow[] {
    this.writer.flush();
    const rows = this.db
      .prepare(
        'SELECT * FROM request_analytics WHERE local_id = ? AND node_id = ? AND finished_at >= ? ORDER BY id DESC LIMIT ?',
      )
      .all(localId, this.nodeId ?? '', sinceMs, limit) as Record<string, unknown>[];
    return rows.reverse().map(toRequestRow);
  }

  recentRequests(limit = 100): RequestRow[] {
    this.writer.flush();
    return (
      this.db.prepare('SELECT * FROM request_analytics ORDER BY id DESC LIMIT ?').all(limit) as Record<
        string,
        unknown
      >[]
    ).map(toRequestRow);
  }

  /** Loads of one local config since `sinceMs`, oldest first (the newest `limit`). */
  loadsFor(localId: string, sinceMs = 0, limit = 500): LoadRow[] {
    // Loads are rare: a read flushes only when one may still be queued, not every request queued since.
    if (this.loadQueued) this.writer.flush();
    this.loadQueued = false;
    const rows = this.db
      .prepare('SELECT * FROM load_analytics WHERE local_id = ? AND finished_at >= ? ORDER BY id DESC LIMIT ?')
      .all(localId, sinceMs, limit) as Record<string, unknown>[];
    return rows.reverse().map(toLoadRow);
  }

  /**
   * The lease timeline's rows: requests and loads that ran (at least partly) in [from, to] — finished at or after
   * `from`, started by `to` — the newest `limit` of each, oldest first; `truncated` when more were there.
   */
  timelineRows(
    from: number,
    to: number,
    limit: number,
  ): { requests: (RequestRow & { id: number })[]; loads: (LoadRow & { id: number })[]; truncated: boolean } {
    this.writer.flush();
    const read = (table: string) =>
      this.db
        .prepare(
          `SELECT * FROM ${table} WHERE finished_at >= ? AND finished_at - duration_ms <= ? ORDER BY finished_at DESC, id DESC LIMIT ?`,
        )
        .all(from, to, limit + 1) as Record<string, unknown>[];
    const req = read('request_analytics');
    const loads = read('load_analytics');
    const truncated = req.length > limit || loads.length > limit;
    return {
      requests: req
        .slice(0, limit)
        .reverse()
        .map((r) => ({ id: r.id as number, ...toRequestRow(r) })),
      loads: loads
        .slice(0, limit)
        .reverse()
        .map((r) => ({ id: r.id as number, ...toLoadRow(r) })),
      truncated,
    };
  }

  recentLoads(limit = 100): LoadRow[] {
    this.writer.flush();
    return (
      this.db.prepare('SELECT * FROM load_analytics ORDER BY id DESC LIMIT ?').all(limit) as Record<string, unknown>[]
    ).map(toLoadRow);
  }
}

export function toRequestRow(r: Record<string, unknown>): RequestRow {
  return {
    finishedAt: r.finished_at as number,
    nodeId: r.node_id as string,
    model: r.model as string,
    localId: r.local_id as string,
    backend: r.backend as string,
    endpoint: r.endpoint as RequestEndpoint,
    streamed: r.streamed === 1,
    promptBytes: r.prompt_bytes as number | null,
    promptTokens: (r.prompt_tokens as number | null | undefined) ?? null,
    tokensGenerated: r.tokens_generated as number | null,
    imagePixels: r.image_pixels as number | null,
    imageSteps: r.image_steps as number | null,
    imageCount: r.image_count as number | null,
    audioSeconds: r.audio_seconds as number | null,
    queueWaitMs: r.queue_wait_ms as number,
    durationMs: r.duration_ms as number,
    serviceMs: (r.service_ms as number | null | undefined) ?? null,
    serviceSource: (r.service_source as RequestServiceSource | null | undefined) ?? null,
    derivedServiceMs: (r.derived_service_ms as number | null | undefined) ?? null,
    outcome: r.outcome as RequestOutcome,
    status: r.status as number | null,
    error: r.error as string | null,
    guardianFor: (r.guardian_for as string | null | undefined) ?? null,
    guardianReason: (r.guardian_reason as GuardianReason | null | undefined) ?? null,
    requestId: (r.request_id as string | null | undefined) ?? null,
    lentFrom: (r.lent_from as string | null | undefined) ?? null,
  };
}

export function toLoadRow(r: Record<string, unknown>): LoadRow {
  return {
    finishedAt: r.finished_at as number,
    nodeId: r.node_id as string,
    model: r.model as string,
    localId: r.local_id as string,
    backend: r.backend as string,
    lane: r.lane as string,
    durationMs: r.duration_ms as number,
    success: r.success === 1,
    displacedLocalId: r.displaced_local_id as string | null,
    error: r.error as string | null,
  };
}

/**
 * Reading the decision log: filters, keyset paging newest first by (at, id), an opaque cursor. The SQL builder is
 * pure; `queryDecisions` runs it over better-sqlite3.
 */
import { RouterError } from '../contract/errors';
import type { Db } from './db';
import { type DecisionKind, type DecisionRow, fromDbRow, type PlanOutcome } from './decision-log-row';

export const DECISION_PAGE_MAX = 1000;
export const DECISION_PAGE_DEFAULT = 200;

type OneOrMany<T> = T | readonly T[];

export interface DecisionFilter {
  /** Inclusive lower bound on `at` (unix ms). */
  from?: number;
  /** Exclusive upper bound on `at` (unix ms). */
  to?: number;
  /** The node that wrote the row. */
  node?: OneOrMany<string>;
  /** Owner or helper model (local ID). */
  model?: string;
  kind?: OneOrMany<DecisionKind>;
  event?: OneOrMany<string>;
  outcome?: OneOrMany<PlanOutcome>;
  reason?: OneOrMany<string>;
}

export interface DecisionQuery extends DecisionFilter {
  /** From the previous page's `nextCursor`; absent for the newest page. */
  cursor?: string | null;
  /** Rows per page, clamped to 1..1000 (default 200). */
  limit?: number;
}

export interface DecisionPage {
  /** Newest first: `at` descending, then `id` descending. */
  rows: DecisionRow[];
  /** Pass back to get the next (older) page; null when there is none. */
  nextCursor: string | null;
  /** Gathered pages: members whose log could not be read (left out from here on, so paging always finishes). */
  missing?: string[];
}

export interface SqlQuery {
  sql: string;
  params: (string | number)[];
}

/** A position in one node's log: the (at, id) of the last row already seen. */
export interface CursorKey {
  at: number;
  id: number;
}

export function clampLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return DECISION_PAGE_DEFAULT;
  return Math.min(DECISION_PAGE_MAX, Math.max(1, Math.floor(limit)));
}

/** Opaque cursor: base64url of `d1:<at>:<id>`. */
export function encodeCursor(key: CursorKey): string {
  return Buffer.from(`d1:${key.at}:${key.id}`, 'utf8').toString('base64url');
}

/** Throws RouterError 400 `invalid_cursor` for anything encodeCursor did not make. */
export function decodeCursor(cursor: string): CursorKey {
  const m = /^d1:(-?\d{1,16}):(-?\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw invalidCursor();
  const key = { at: Number(m[1]), id: Number(m[2]) };
  if (!Number.isSafeInteger(key.at) || !Number.isSafeInteger(key.id)) throw invalidCursor();
  return key;
}

export function cursorOf(row: Pick<DecisionRow, 'at' | 'id'>): string {
  return encodeCursor({ at: row.at, id: row.id });
}

export function invalidCursor(): RouterError {
  return new RouterError(
    400,
    'invalid_cursor',
    'cursor is not one this log returned',
    'invalid_request_error',
    'cursor',
  );
}

/** WHERE clause and parameters of a filter (no paging); `WHERE 1` when nothing is filtered. */
export function buildDecisionWhere(f: DecisionFilter): SqlQuery {
  const parts: string[] = [];
  const params: (string | number)[] = [];
  if (f.from !== undefined) {
    parts.push('at >= ?');
    params.push(f.from);
  }
  if (f.to !== undefined) {
    parts.push('at < ?');
    params.push(f.to);
  }
  if (f.model !== undefined) {
    parts.push('(owner_model = ? OR helper_model = ?)');
    params.push(f.model, f.model);
  }
  const inList = (column: string, v: OneOrMany<string> | undefined) => {
    if (v === undefined) return;
    const values: readonly string[] = typeof v === 'string' ? [v] : v;
    if (values.length === 0) return;
    parts.push(values.length === 1 ? `${column} = ?` : `${column} IN (${values.map(() => '?').join(', ')})`);
    params.push(...values);
  };
  inList('node_id', f.node);
  inList('kind', f.kind);
  inList('event', f.event);
  inList('outcome', f.outcome);
  inList('reason', f.reason);
  return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : 'WHERE 1', params };
}

/** The page query: newest first by (at, id), strictly after the cursor, limit + 1 rows to know whether more exist. */
export function buildDecisionQuery(q: DecisionQuery): SqlQuery & { limit: number } {
  const limit = clampLimit(q.limit);
  const where = buildDecisionWhere(q);
  let sql = `SELECT * FROM offload_decisions ${where.sql}`;
  const params = [...where.params];
  if (q.cursor) {
    const c = decodeCursor(q.cursor);
    sql += ' AND (at < ? OR (at = ? AND id < ?))';
    params.push(c.at, c.at, c.id);
  }
  sql += ' ORDER BY at DESC, id DESC LIMIT ?';
  params.push(limit + 1);
  return { sql, params, limit };
}

export function queryDecisions(db: Db, q: DecisionQuery = {}): DecisionPage {
  const { sql, params, limit } = buildDecisionQuery(q);
  const raw = db.prepare(sql).all(...params) as Record<string, unknown>[];
  const rows = raw.slice(0, limit).map(fromDbRow);
  return { rows, nextCursor: raw.length > limit ? cursorOf(rows[rows.length - 1]) : null };
}

/** Every row matching a filter, newest first, page by page (for exports); stops after `max` rows. */
export function* iterateDecisions(
  db: Db,
  filter: DecisionFilter = {},
  max = Number.POSITIVE_INFINITY,
): Generator<DecisionRow> {
  let cursor: string | null = null;
  let n = 0;
  do {
    const page: DecisionPage = queryDecisions(db, { ...filter, cursor, limit: DECISION_PAGE_MAX });
    for (const row of page.rows) {
      if (n++ >= max) return;
      yield row;
    }
    cursor = page.nextCursor;
  } while (cursor);
}

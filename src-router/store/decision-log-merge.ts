/**
 * Gathering the decision log from several nodes (UI-1): each node pages its own log newest first; the master merges
 * the pages and hands the client one combined cursor. Pure.
 *
 * Combined cursor scheme: base64url of JSON `{"v":1,"n":{"<nodeKey>": <node cursor> | null}}`, one entry per node
 * already asked: a string is that node's own `nextCursor`-style cursor (the (at, id) of its last row the client has
 * seen), null means that node's log is exhausted. A node with no entry starts at its newest row.
 *
 * One page on the master:
 *   1. `state = decodeMergedCursor(req.cursor)`
 *   2. for each node: `nodeCursor(state, key)`: skip it when `done`, else ask it for `limit` rows (same filters)
 *      after `cursor`; a node that does not answer is passed as `page: null` (its position is kept).
 *   3. `mergeNodePages(sources, limit, state)` → `{ rows, nextCursor }`: rows newest first, at most `limit`.
 * The filters are not part of the cursor: the client sends the same filters with every page.
 */
import { clampLimit, cursorOf, type DecisionPage, invalidCursor } from './decision-log-query';
import type { DecisionRow } from './decision-log-row';

/** Node key → that node's cursor (string), or null when exhausted. */
export type MergedCursorState = Record<string, string | null>;

export interface NodeLogPage {
  /** Stable per node across pages: its node ID (or URL). */
  key: string;
  /** What the node answered, or null when it could not be asked this time. */
  page: DecisionPage | null;
}

export interface MergedRows {
  /** Newest first, at most `limit`. */
  rows: DecisionRow[];
  /** How many rows of each input page made it into `rows` (always a prefix of that page). */
  taken: number[];
}

/** Merge order: newest first; ties on `at` by node ID, then by id descending (deterministic whatever the input order). */
export function compareDecisions(a: DecisionRow, b: DecisionRow): number {
  if (a.at !== b.at) return b.at - a.at;
  if (a.nodeId !== b.nodeId) return a.nodeId < b.nodeId ? -1 : 1;
  return b.id - a.id;
}

/**
 * Merges pages (each already newest first, as `queryDecisions` returns them) into one newest-first list of at most
 * `limit` rows; stable: rows that compare equal keep page order, then input order. `more[i]` true: page i has more
 * rows after it, so merging stops once that page is used up (a later row of that node could be newer than what
 * would follow).
 */
export function mergeLogs(pages: DecisionRow[][], limit: number, more: boolean[] = []): MergedRows {
  const max = Math.max(0, Math.floor(limit));
  const taken = pages.map(() => 0);
  const rows: DecisionRow[] = [];
  while (rows.length < max) {
    let best = -1;
    for (let i = 0; i < pages.length; i++) {
      if (taken[i] >= pages[i].length) continue;
      if (best < 0 || compareDecisions(pages[i][taken[i]], pages[best][taken[best]]) < 0) best = i;
    }
    if (best < 0) break;
    rows.push(pages[best][taken[best]]);
    taken[best]++;
    if (more[best] && taken[best] >= pages[best].length) break;
  }
  return { rows, taken };
}

export function encodeMergedCursor(state: MergedCursorState): string {
  return Buffer.from(JSON.stringify({ v: 1, n: state }), 'utf8').toString('base64url');
}

/** Empty state for no cursor; RouterError 400 `invalid_cursor` for anything encodeMergedCursor did not make. */
export function decodeMergedCursor(cursor: string | null | undefined): MergedCursorState {
  if (!cursor) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!isRecord(parsed) || parsed.v !== 1 || !isRecord(parsed.n)) throw invalidCursor();
  const state: MergedCursorState = {};
  for (const [key, value] of Object.entries(parsed.n)) {
    if (value !== null && typeof value !== 'string') throw invalidCursor();
    state[key] = value;
  }
  return state;
}

/** What to ask one node for: nothing when its log is exhausted, else its rows after `cursor` (undefined: newest). */
export function nodeCursor(state: MergedCursorState, key: string): { done: boolean; cursor: string | undefined } {
  if (!(key in state)) return { done: false, cursor: undefined };
  const c = state[key];
  return c === null ? { done: true, cursor: undefined } : { done: false, cursor: c };
}

/** The combined cursor after a merge, or null when every known node is exhausted. */
export function nextMergedCursor(prev: MergedCursorState, sources: NodeLogPage[], taken: number[]): string | null {
  const next: MergedCursorState = { ...prev };
  sources.forEach((s, i) => {
    if (!s.page) return; // not asked or no answer: keep its position
    const t = taken[i] ?? 0;
    if (t >= s.page.rows.length && s.page.nextCursor === null) next[s.key] = null;
    else if (t > 0) next[s.key] = cursorOf(s.page.rows[t - 1]);
  });
  const unfinished = Object.values(next).some((c) => c !== null) || sources.some((s) => !(s.key in next));
  return unfinished ? encodeMergedCursor(next) : null;
}

/** Steps 3 of the scheme: merge what the nodes answered and compute the combined next cursor. */
export function mergeNodePages(sources: NodeLogPage[], limit: number, prev: MergedCursorState = {}): DecisionPage {
  const pages = sources.map((s) => s.page?.rows ?? []);
  const more = sources.map((s) => s.page !== null && s.page.nextCursor !== null);
  const { rows, taken } = mergeLogs(pages, clampLimit(limit), more);
  return { rows, nextCursor: nextMergedCursor(prev, sources, taken) };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

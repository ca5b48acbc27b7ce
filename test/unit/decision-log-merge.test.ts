import { describe, expect, it } from 'vitest';
import {
  compareDecisions,
  type Db,
  type DecisionFilter,
  DecisionLogWriter,
  type DecisionRow,
  decodeMergedCursor,
  encodeMergedCursor,
  mergeLogs,
  mergeNodePages,
  type NodeLogPage,
  nodeCursor,
  openStore,
  queryDecisions,
} from '../../src-router/store';
import { tempDir } from '../support/node-harness';

function nodeStore(nodeId: string, ats: number[]): Db {
  const db = openStore(tempDir());
  const w = new DecisionLogWriter(db, { nodeId, retentionMs: 0, autoFlush: false });
  for (const at of ats)
    w.add({
      at,
      kind: 'plan',
      event: at % 3 ? 'granted' : 'skipped',
      outcome: at % 3 ? 'granted' : 'skipped',
      ownerNode: nodeId,
      ownerModel: 'm',
    });
  w.close();
  return db;
}

/** What the master does for one page of the gathered log, over in-process "nodes". */
function masterPage(
  nodes: Record<string, Db>,
  cursor: string | null,
  limit: number,
  filter: DecisionFilter = {},
  down: string[] = [],
) {
  const state = decodeMergedCursor(cursor);
  const sources: NodeLogPage[] = Object.entries(nodes).map(([key, db]) => {
    const c = nodeCursor(state, key);
    if (c.done || down.includes(key)) return { key, page: null };
    return { key, page: queryDecisions(db, { ...filter, cursor: c.cursor, limit }) };
  });
  return mergeNodePages(sources, limit, state);
}

const key = (r: DecisionRow) => `${r.nodeId}#${r.id}`;

describe('decision log merge across nodes', () => {
  // Three nodes with interleaved and equal timestamps, of different sizes.
  const nodes: Record<string, Db> = {
    c: nodeStore(
      'c',
      Array.from({ length: 120 }, (_, i) => 1000 + i * 3),
    ),
    a: nodeStore(
      'a',
      Array.from({ length: 300 }, (_, i) => 1000 + i),
    ),
    b: nodeStore(
      'b',
      Array.from({ length: 45 }, (_, i) => 1000 + i * 7),
    ),
  };
  const all = Object.values(nodes)
    .flatMap((db) => queryDecisions(db, { limit: 1000 }).rows)
    .sort(compareDecisions);

  it('merges pages newest first, ties by node then id, keeping a prefix of each page', () => {
    const pages = Object.values(nodes).map((db) => queryDecisions(db, { limit: 50 }).rows);
    const { rows, taken } = mergeLogs(pages, 50);
    expect(rows).toEqual(all.slice(0, 50));
    expect(taken.reduce((s, n) => s + n, 0)).toBe(50);
    pages.forEach((p, i) => expect(rows.filter((r) => r.nodeId === p[0].nodeId)).toEqual(p.slice(0, taken[i])));
    expect(mergeLogs(pages.toReversed(), 50).rows).toEqual(rows);
  });

  it('is stable for rows that compare equal', () => {
    const row = all[0];
    const twin = { ...row, details: { twin: true } };
    expect(mergeLogs([[row], [twin]], 2).rows).toEqual([row, twin]);
    expect(mergeLogs([[twin], [row]], 2).rows).toEqual([twin, row]);
  });

  it('pages through every node with one combined cursor, no duplicates or gaps', () => {
    for (const limit of [50, 7, 1000]) {
      const seen: DecisionRow[] = [];
      let cursor: string | null = null;
      do {
        const page = masterPage(nodes, cursor, limit);
        expect(page.rows.length).toBeLessThanOrEqual(limit);
        seen.push(...page.rows);
        cursor = page.nextCursor;
      } while (cursor);
      expect(seen.map(key)).toEqual(all.map(key));
    }
  });

  it('keeps filters across pages (sent again with every page)', () => {
    const skipped = all.filter((r) => r.event === 'skipped');
    const seen: DecisionRow[] = [];
    let cursor: string | null = null;
    do {
      const page = masterPage(nodes, cursor, 25, { event: 'skipped' });
      seen.push(...page.rows);
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.map(key)).toEqual(skipped.map(key));
  });

  it('keeps the position of a node that did not answer and resumes it later', () => {
    const first = masterPage(nodes, null, 40, {}, ['b']);
    expect(first.rows.every((r) => r.nodeId !== 'b')).toBe(true);
    const state = decodeMergedCursor(first.nextCursor);
    expect(Object.keys(state).sort()).toEqual(['a', 'c']);
    const seen = [...first.rows];
    let cursor = first.nextCursor;
    while (cursor) {
      const page = masterPage(nodes, cursor, 40);
      seen.push(...page.rows);
      cursor = page.nextCursor;
    }
    expect(new Set(seen.map(key)).size).toBe(all.length);
    expect(seen).toHaveLength(all.length);
  });

  it('ends when every node is exhausted, and rejects foreign cursors', () => {
    const page = masterPage(nodes, null, 1000);
    expect(page.rows).toHaveLength(all.length);
    expect(page.nextCursor).toBeNull();
    expect(decodeMergedCursor(encodeMergedCursor({ a: null, b: 'x' }))).toEqual({ a: null, b: 'x' });
    expect(nodeCursor({ a: null }, 'a')).toEqual({ done: true, cursor: undefined });
    expect(nodeCursor({}, 'a')).toEqual({ done: false, cursor: undefined });
    expect(() => decodeMergedCursor('nope')).toThrow(expect.objectContaining({ code: 'invalid_cursor' }));
    expect(() => decodeMergedCursor(Buffer.from(JSON.stringify({ v: 1, n: { a: 3 } })).toString('base64url'))).toThrow(
      /cursor/,
    );
  });
});

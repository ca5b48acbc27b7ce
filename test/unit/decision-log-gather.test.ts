import { describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import { decisionPages, gatherDecisions } from '../../src-router/cluster/decision-gather';
import { DecisionLogWriter, openStore, queryDecisions } from '../../src-router/store';
import { tempDir } from '../support/node-harness';

// Issue #9: a member that keeps failing never makes paging or the export loop: it is reported missing.
const log = { warn() {}, info() {}, error() {}, debug() {} } as never;

describe("gathering the cluster's decision log", () => {
  it('a member that does not answer is reported missing; paging and the export still finish with every other row', async () => {
    const db = openStore(tempDir());
    const w = new DecisionLogWriter(db, { nodeId: 'm', retentionMs: 0, autoFlush: false });
    for (let i = 0; i < 2500; i++) w.add({ at: 1000 + i, kind: 'plan', event: 'skipped', outcome: 'skipped' });
    w.close();
    const dead = `http://127.0.0.1:${await freePort()}`;
    const deps = {
      nodeId: 'm',
      clusterToken: 't',
      own: (q: Parameters<typeof queryDecisions>[1]) => queryDecisions(db, q),
      members: () => [{ nodeId: 'gone', url: dead }],
      log,
    };
    const first = await gatherDecisions(deps, { limit: 10 });
    expect(first.missing).toEqual(['gone']);
    expect(first.rows).toHaveLength(10);
    const pages: number[] = [];
    for await (const rows of decisionPages(deps, {}, 100_000)) pages.push(rows.length);
    expect(pages.reduce((a, b) => a + b, 0)).toBe(2500);
    // Page by page, never more than 1,000 rows held at once; `max` cuts exactly.
    expect(Math.max(...pages)).toBeLessThanOrEqual(1000);
    let cut = 0;
    for await (const rows of decisionPages(deps, {}, 1_234)) cut += rows.length;
    expect(cut).toBe(1_234);
    db.close();
  });
});

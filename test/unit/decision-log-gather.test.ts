import { describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import { gatherAllDecisions, gatherDecisions } from '../../src-router/cluster/decision-gather';
import { DecisionLogWriter, openStore, queryDecisions } from '../../src-router/store';
import { tempDir } from '../support/node-harness';

// Issue #9: a member that keeps failing never makes paging or the export loop: it is reported missing.
const log = { warn() {}, info() {}, error() {}, debug() {} } as never;

describe('gathering the cluster\'s decision log', () => {
  it('a member that does not answer is reported missing; paging and the export still finish with every other row', async () => {
    const db = openStore(tempDir());
    const w = new DecisionLogWriter(db, { nodeId: 'm', retentionMs: 0, autoFlush: false });
    for (let i = 0; i < 2500; i++) w.add({ at: 1000 + i, kind: 'plan', event: 'skipped', outcome: 'skipped' });
    w.close();
    const dead = `http://127.0.0.1:${await freePort()}`;
    const deps = { nodeId: 'm', clusterToken: 't', own: (q: Parameters<typeof queryDecisions>[1]) => queryDecisions(db, q), members: () => [{ nodeId: 'gone', url: dead }], log };
    const first = await gatherDecisions(deps, { limit: 10 });
    expect(first.missing).toEqual(['gone']);
    expect(first.rows).toHaveLength(10);
    const all = await gatherAllDecisions(deps, {}, 100_000);
    expect(all).toHaveLength(2500);
    db.close();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type HeldItemView,
  type LendingCluster,
  simText,
  startLendingCluster,
  watchHeld,
} from '../support/lending-cluster';
import { eventually } from '../support/node-harness';

// LEASE-7: when the helper is the master itself, the master serves the lent request in-process (it has no
// cluster.public_url); the owner, a slave, keeps every client connection and gets every answer.

describe('the master is the helper: owner slave/a → master/b', () => {
  let c: LendingCluster;

  const simRequests = async (url: string) => {
    const lanes = (await (
      await fetch(`${url}/router/v1/console/lanes`, { headers: { authorization: `Bearer ${c.master.token}` } })
    ).json()) as { lanes: { port: number | null }[] };
    return ((await (await fetch(`http://127.0.0.1:${lanes.lanes[0].port}/sim/stats`)).json()) as { requests: number })
      .requests;
  };

  beforeAll(async () => {
    c = await startLendingCluster({
      masterModels: { b: simText('model-b', '20ms') },
      slaves: { owner: { a: simText('model-a', '60ms') } },
    });
    for (let i = 0; i < 3; i++) {
      expect((await c.chat('owner', 'model-a')).status).toBe(200);
      expect((await c.chat('master', 'model-b')).status).toBe(200);
    }
    await c.link('text', ['owner', 'a'], ['master', 'b']);
  });
  afterAll(() => c?.stop());

  it('serves lent requests in-process; every client on the owner gets its answer from its own connection', async () => {
    const before = await simRequests(c.master.url);
    let lentSeen = 0;
    const w = watchHeld(
      c,
      'owner',
      (v) => (lentSeen += v.models.find((m) => m.model === 'a')?.held.filter((i) => i.state === 'lent').length ?? 0),
    );
    const answers = await Promise.all(Array.from({ length: 10 }, () => c.chat('owner', 'model-a')));
    await w.stop();
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(answers.every((a) => a.body.model === 'model-a' && Array.isArray(a.body.choices))).toBe(true);
    expect(lentSeen).toBeGreaterThan(0);
    const rows = await c.decisions();
    const granted = rows.filter((r) => r.kind === 'plan' && r.outcome === 'granted');
    expect(granted.length).toBeGreaterThan(0);
    expect(granted.every((r) => r.helperNode === 'master' && r.helperModel === 'b' && r.slots === 2)).toBe(true); // b is faster (LEASE-9)
    const lent = rows.filter((r) => r.nodeId === 'owner' && r.event === 'lent');
    expect(lent.length).toBeGreaterThan(0);
    expect(lent.every((r) => r.helperNode === 'master' && (r.requestsOut ?? 0) <= 2)).toBe(true);
    // Served by the master's own engine, and nothing was refused on the way.
    expect((await simRequests(c.master.url)) - before).toBe(lent.length);
    expect(rows.filter((r) => r.event === 'relay_refused' || r.event === 'returned')).toEqual([]);
  });

  it('hands unstarted borrowed work back when its own request arrives; the owner serves it (HELPER-1 in-process)', async () => {
    let masterView: { active: HeldItemView[]; held: HeldItemView[] } | undefined;
    const w = watchHeld(c, 'master', (v) => (masterView = v.models.find((m) => m.model === 'b')));
    const since = Date.now();
    const own = [
      c.chat('master', 'model-b', { extra: { sim_token_time: 150 } }),
      c.chat('master', 'model-b', { extra: { sim_token_time: 150 } }),
    ];
    await eventually(() => masterView?.active.filter((i) => !i.borrowed).length === 2, {
      what: 'two own requests at the master engine',
    });
    const answers = Promise.all(Array.from({ length: 8 }, () => c.chat('owner', 'model-a')));
    await eventually(() => (masterView?.held.filter((i) => i.borrowed).length ?? 0) > 0, {
      what: 'borrowed requests waiting on the master',
    });
    own.push(c.chat('master', 'model-b'));
    expect((await Promise.all(own)).map((a) => a.status)).toEqual([200, 200, 200]);
    const results = await answers;
    await w.stop();
    expect(results.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(results.every((a) => a.body.model === 'model-a')).toBe(true);
    const rows = (await c.decisions()).filter((r) => r.at >= since);
    expect(rows.filter((r) => r.nodeId === 'master' && r.event === 'borrowed_returned').map((r) => r.reason)).toContain(
      'own_work_arrived',
    );
    const returned = rows.filter((r) => r.nodeId === 'owner' && r.event === 'returned');
    expect(returned.length).toBeGreaterThan(0);
    for (const r of returned)
      expect(rows.filter((x) => x.event === 'lent' && x.requestId === r.requestId).length).toBe(1);
    // A return is not a refusal: the only refusals are lends the owner made before it heard the master's "no
    // lease" (the master stopped the lease when its own work arrived).
    expect(rows.filter((r) => r.event === 'relay_refused' && r.reason !== 'no_live_lease')).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DecisionRowView,
  type HeldItemView,
  type LendingCluster,
  simText,
  startLendingCluster,
  watchHeld,
} from '../support/lending-cluster';
import { eventually } from '../support/node-harness';

// LEASE-5/8: lent requests travel owner → master → helper; a lent request the master cannot pass on gets a
// relay_refused row (no_live_lease, helper_unreachable, forward_failed) and the owner runs it itself; one whose fate
// is unknown is resolved at the helper first (lent_fate). HELPER-1/2,
// QUEUE-5: a request a helper hands back (409 offload_returned) is re-queued on its owner with its first arrival and
// never lent again.

const answeredByOwner = (answers: { status: number; body: { model?: string } }[], n: number) => {
  expect(answers.map((a) => a.status)).toEqual(Array(n).fill(200));
  expect(answers.every((a) => a.body.model === 'model-a')).toBe(true);
};

/** Every request that came back was lent exactly once: a returned request is never lent again (HELPER-2). */
function neverLentTwice(rows: DecisionRowView[]) {
  const lent = new Map<string, number>();
  for (const r of rows.filter((x) => x.event === 'lent')) lent.set(r.requestId!, (lent.get(r.requestId!) ?? 0) + 1);
  const returned = rows.filter((x) => x.event === 'returned');
  expect(returned.length).toBeGreaterThan(0);
  for (const r of returned) expect(lent.get(r.requestId!)).toBe(1);
}

async function rowsWhere(c: LendingCluster, filter: Record<string, string>, atLeast = 1) {
  return eventually(
    async () => {
      const rows = await c.decisions(filter);
      return rows.length >= atLeast ? rows : undefined;
    },
    { what: `decision rows ${JSON.stringify(filter)}` },
  );
}

describe('relay_refused no_live_lease and forward_failed', () => {
  let c: LendingCluster;

  beforeAll(async () => {
    // The helper's engine answers 500 to everything (sim fail: http_500); it has no fit of its own, so the master
    // prices it with the owner's fit (PRICE-3) and lends to it.
    c = await startLendingCluster({
      slaves: {
        owner: { a: simText('model-a', '60ms') },
        helper: { b: simText('model-b', '10ms', { fail: 'http_500' }) },
      },
    });
    for (let i = 0; i < 3; i++) expect((await c.chat('owner', 'model-a')).status).toBe(200);
    expect((await c.chat('helper', 'model-b')).status).toBe(500); // loads b: no switch needed to help
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  });
  afterAll(() => c?.stop());

  it('refuses a lent request without a live lease (no_live_lease)', async () => {
    const relay = await c.node<{ kind: string; reason: string }>(c.master.url, '/router/v1/node/offload/relay', {
      method: 'POST',
      body: JSON.stringify({
        requestId: 'relay-without-lease',
        owner: { nodeId: 'owner', model: 'a' },
        helper: { nodeId: 'helper', model: 'b' },
        endpoint: 'chat',
        json: { model: 'a', messages: [{ role: 'user', content: 'hi' }] },
      }),
    });
    expect(relay).toMatchObject({ kind: 'refused', reason: 'no_live_lease' });
    const rows = await rowsWhere(c, { kind: 'dispatch', event: 'relay_refused', reason: 'no_live_lease' });
    expect(rows.find((r) => r.requestId === 'relay-without-lease')).toMatchObject({
      nodeId: 'master',
      ownerNode: 'owner',
      ownerModel: 'a',
      helperNode: 'helper',
      helperModel: 'b',
    });
  });

  it('a helper engine answering 500 is forward_failed: the owner serves the request itself', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => c.chat('owner', 'model-a')));
    answeredByOwner(answers, 8);
    const refused = await rowsWhere(c, { kind: 'dispatch', event: 'relay_refused', reason: 'forward_failed' });
    expect(refused.every((r) => r.nodeId === 'master' && r.ownerModel === 'a' && r.helperModel === 'b')).toBe(true);
    const rows = (await c.decisions({ kind: 'dispatch' })).filter((r) => r.nodeId === 'owner');
    const returned = rows.filter((r) => r.event === 'returned');
    expect(returned.map((r) => r.reason)).toEqual(Array(returned.length).fill('forward_failed'));
    expect(new Set(returned.map((r) => r.requestId))).toEqual(new Set(refused.map((r) => r.requestId)));
    neverLentTwice(rows);
  });
});

describe('relay_refused helper_unreachable: the helper is killed mid-lease', () => {
  let c: LendingCluster;

  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: { owner: { a: simText('model-a', '100ms') }, helper: { b: simText('model-b', '40ms') } },
    });
    for (let i = 0; i < 3; i++) {
      expect((await c.chat('owner', 'model-a')).status).toBe(200);
      expect((await c.chat('helper', 'model-b')).status).toBe(200);
    }
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  });
  afterAll(() => c?.stop());

  it('every client of the owner gets its answer; each request lent to the dead helper comes back as never sent or as its helper gone', async () => {
    let killed = false;
    const w = watchHeld(
      c,
      'owner',
      (v) => {
        if (!killed && v.models.find((m) => m.model === 'a')?.held.some((i) => i.state === 'lent')) {
          killed = true;
          c.slaves.helper.proc.kill('SIGKILL');
        }
      },
      5,
    );
    const answers = await Promise.all(Array.from({ length: 10 }, () => c.chat('owner', 'model-a')));
    await w.stop();
    expect(killed).toBe(true);
    answeredByOwner(answers, 10); // nothing lost
    // A relay that never reached the dead helper is refused helper_unreachable by the master; one that was in flight
    // when it died has an unknown fate, and the owner finds the helper's port refusing: lent_fate helper_gone. Either
    // way the owner runs it, once.
    const all = await eventually(
      async () => {
        const rows = await c.decisions({ kind: 'dispatch' });
        const back = rows.filter(
          (r) =>
            (r.event === 'relay_refused' && r.reason === 'helper_unreachable') ||
            (r.event === 'lent_fate' && r.reason === 'helper_gone'),
        );
        return back.length > 0 && rows;
      },
      { what: 'the requests lent to the dead helper back at their owner' },
    );
    expect(
      all
        .filter((r) => r.event === 'relay_refused' && r.reason === 'helper_unreachable')
        .every((r) => r.nodeId === 'master' && r.helperNode === 'helper'),
    ).toBe(true);
    expect(
      all
        .filter((r) => r.event === 'lent_fate' && r.reason === 'helper_gone')
        .every((r) => r.nodeId === 'owner' && r.helperNode === 'helper'),
    ).toBe(true);
    const rows = all.filter((r) => r.nodeId === 'owner');
    expect(rows.filter((r) => r.event === 'returned' && r.reason === 'helper_unreachable').length).toBeGreaterThan(0);
    neverLentTwice(rows);
  });
});

describe("409 offload_returned: the helper's own request arrives (HELPER-1)", () => {
  let c: LendingCluster;

  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: { owner: { a: simText('model-a', '60ms') }, helper: { b: simText('model-b', '20ms') } },
    });
    for (let i = 0; i < 3; i++) {
      expect((await c.chat('owner', 'model-a')).status).toBe(200);
      expect((await c.chat('helper', 'model-b')).status).toBe(200);
    }
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  });
  afterAll(() => c?.stop());

  it('re-queues the handed-back requests on the owner with their first arrival; they are never lent again', async () => {
    let helperView: { active: HeldItemView[]; held: HeldItemView[] } | undefined;
    const wh = watchHeld(c, 'helper', (v) => (helperView = v.models.find((m) => m.model === 'b')));
    const returnedSeen = new Map<string, number>();
    const orderViolations: string[][] = [];
    const wo = watchHeld(
      c,
      'owner',
      (v) => {
        const a = v.models.find((m) => m.model === 'a');
        if (!a) return;
        for (const i of a.held) if (i.returned) returnedSeen.set(i.id, Date.parse(i.firstArrival));
        // QUEUE-5: waiting requests go in first-arrival order, a returned one included.
        const waiting = a.held.filter((i) => i.state !== 'lent').map((i) => Date.parse(i.firstArrival));
        if (waiting.some((t, k) => k > 0 && t < waiting[k - 1]))
          orderViolations.push(a.held.map((i) => `${i.state}:${i.firstArrival}`));
      },
      5,
    );

    // The helper's engine slots (depth 2) are busy with two long own requests; lent work waits in its router queue.
    const own = [
      c.chat('helper', 'model-b', { extra: { sim_token_time: 150 } }),
      c.chat('helper', 'model-b', { extra: { sim_token_time: 150 } }),
    ];
    await eventually(() => helperView?.active.filter((i) => !i.borrowed).length === 2, {
      what: 'two own requests at the helper engine',
    });
    const answers = Promise.all(Array.from({ length: 8 }, () => c.chat('owner', 'model-a')));
    await eventually(() => (helperView?.held.filter((i) => i.borrowed).length ?? 0) > 0, {
      what: 'borrowed requests waiting on the helper',
    });
    // Its own request arrives: unstarted borrowed requests are handed back with 409 offload_returned.
    own.push(c.chat('helper', 'model-b'));
    expect((await Promise.all(own)).map((a) => a.status)).toEqual([200, 200, 200]);
    answeredByOwner(await answers, 8);
    await Promise.all([wh.stop(), wo.stop()]);

    const helperRows = await rowsWhere(c, { kind: 'helper', event: 'borrowed_returned' });
    expect(helperRows.filter((r) => r.nodeId === 'helper').map((r) => r.reason)).toContain('own_work_arrived');
    const rows = (await c.decisions({ kind: 'dispatch' })).filter((r) => r.nodeId === 'owner');
    const returned = rows.filter((r) => r.event === 'returned');
    expect(returned.length).toBeGreaterThan(0);
    // LOG-3: the returned row names why, as a reason code (ReturnedReason): its own work arrived; or, for a request
    // the owner lent before it heard the master's "no lease", the helper was busy on arrival or the master had
    // already dropped the lease (relay_refused no_live_lease).
    const reasons = returned.map((r) => r.reason);
    expect
      .soft(reasons.filter((r) => r !== 'own_work_arrived' && r !== 'busy_on_arrival' && r !== 'no_live_lease'))
      .toEqual([]);
    expect.soft(reasons).toContain('own_work_arrived');
    neverLentTwice(rows);
    // The first arrival is kept: the re-queued request shows the time it first arrived, before it was lent.
    expect(returnedSeen.size).toBeGreaterThan(0);
    for (const [id, firstArrival] of returnedSeen) {
      const lent = rows.find((r) => r.event === 'lent' && r.requestId === id)!;
      expect(lent).toBeDefined();
      expect(firstArrival).toBeLessThanOrEqual(lent.at);
    }
    expect(orderViolations).toEqual([]);
  });
});

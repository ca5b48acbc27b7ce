import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLUSTER_TOKEN,
  type DecisionRowView,
  type HeldItemView,
  type LendingCluster,
  simText,
  startLendingCluster,
  watchHeld,
} from '../support/lending-cluster';
import { eventually } from '../support/node-harness';

// QUEUE-4: a model that is only a helper never lends: its own requests are never withdrawn nor reported to the
// master, a pushed lease naming it as owner is not one its master holds and is ignored, and its own requests go through the
// router queue so that its own work goes ahead of borrowed work. HELPER-3: with load_if_unloaded cleared, a helper
// whose linked model is not loaded takes no lent work, and a borrowed request that would need a load is handed back.

const ownerRows = (rows: DecisionRowView[]) => rows.filter((r) => r.ownerNode === 'helper' && r.ownerModel === 'b');

describe('helper-only model b on node helper (link owner/a → helper/b)', () => {
  let c: LendingCluster;

  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: { owner: { a: simText('model-a', '60ms') }, helper: { b: simText('model-b', '30ms') } },
    });
    for (let i = 0; i < 3; i++) {
      expect((await c.chat('owner', 'model-a')).status).toBe(200);
      expect((await c.chat('helper', 'model-b')).status).toBe(200);
    }
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  });
  afterAll(() => c?.stop());

  it('queues its own requests in the router but never reports nor lends them', async () => {
    const seen = { held: 0, lent: 0 };
    const w = watchHeld(c, 'helper', (v) => {
      const b = v.models.find((m) => m.model === 'b');
      seen.held = Math.max(seen.held, b?.held.filter((i) => !i.borrowed).length ?? 0);
      seen.lent += b?.held.filter((i) => i.state === 'lent').length ?? 0;
    });
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => c.chat('helper', 'model-b', { extra: { sim_token_time: 40 } })),
    );
    await w.stop();
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(seen.held).toBeGreaterThanOrEqual(4); // QUEUE-1: enrolled, so its own requests wait in the router queue
    expect(seen.lent).toBe(0);
    const rows = await c.decisions();
    expect(ownerRows(rows)).toEqual([]); // no plan rows (never reported) and no dispatch rows as an owner
    expect(rows.filter((r) => r.nodeId === 'helper' && r.event === 'lent')).toEqual([]);
  });

  it('ignores a pushed lease naming it as owner (its master holds none) and logs it; nothing is lent', async () => {
    const seen = { lent: 0, held: 0 };
    const w = watchHeld(c, 'helper', (v) => {
      const b = v.models.find((m) => m.model === 'b');
      seen.held = Math.max(seen.held, b?.held.length ?? 0);
      seen.lent += b?.held.filter((i) => i.state === 'lent').length ?? 0;
    });
    const answers = Promise.all(
      Array.from({ length: 6 }, () => c.chat('helper', 'model-b', { extra: { sim_token_time: 40 } })),
    );
    await eventually(() => seen.held >= 2, { what: 'own requests of b held on the helper' });
    const lease = {
      linkId: 'forged',
      owner: { nodeId: 'helper', model: 'b' },
      helper: { nodeId: 'owner', model: 'a' },
      slots: 2,
      ttlMs: 5_000,
      probe: false,
      ownerJobMs: null,
      helperJobMs: null,
      helperSwitchMs: null,
      measured: false,
    };
    expect(
      await c.node(c.urls.helper, '/router/v1/node/offload/lease', {
        method: 'POST',
        body: JSON.stringify({ owner: lease.owner, lease }),
      }),
    ).toMatchObject({ ignored: true });
    await eventually(() => /lease push ignored/.test(c.slaves.helper.output()), {
      what: 'the ignored lease logged on the helper',
    });
    expect((await answers).map((a) => a.status)).toEqual(Array(6).fill(200));
    await w.stop();
    expect(seen.lent).toBe(0);
    const rows = await c.decisions();
    expect(rows.filter((r) => r.nodeId === 'helper' && (r.event === 'lent' || r.event === 'lease_updated'))).toEqual(
      [],
    );
    expect(ownerRows(rows).filter((r) => r.kind === 'plan')).toEqual([]);
  });

  it('its own requests go ahead of borrowed work (QUEUE-4) while it helps owner a', async () => {
    // Owner a lends to b (b is faster); once lent work runs on the helper, b's own requests arrive.
    let ownerLent = 0;
    const wo = watchHeld(
      c,
      'owner',
      (v) => (ownerLent += v.models.find((m) => m.model === 'a')?.held.filter((i) => i.state === 'lent').length ?? 0),
    );
    const violations: string[] = [];
    let prev: { ownWaiting: number; activeBorrowed: Set<string> } | null = null;
    let borrowedSeen = 0;
    const wh = watchHeld(
      c,
      'helper',
      (v) => {
        const b = v.models.find((m) => m.model === 'b');
        if (!b) return;
        const activeBorrowed = new Set(b.active.filter((i) => i.borrowed).map((i) => i.id));
        const ownWaiting = b.held.filter((i: HeldItemView) => !i.borrowed).length;
        borrowedSeen += activeBorrowed.size;
        // A borrowed request that reached the engine while an own request was waiting jumped the queue.
        if (prev && prev.ownWaiting > 0)
          for (const id of activeBorrowed) if (!prev.activeBorrowed.has(id)) violations.push(id);
        // Own work always before borrowed work in the router queue.
        const firstBorrowed = b.held.findIndex((i) => i.borrowed);
        if (firstBorrowed >= 0 && b.held.slice(firstBorrowed).some((i) => !i.borrowed)) violations.push('order');
        prev = { ownWaiting, activeBorrowed };
      },
      5,
    );
    const ownerAnswers = Promise.all(Array.from({ length: 12 }, () => c.chat('owner', 'model-a')));
    await eventually(() => borrowedSeen > 0, { what: 'borrowed work running on the helper' });
    const ownAnswers = await Promise.all(
      Array.from({ length: 3 }, () => c.chat('helper', 'model-b', { extra: { sim_token_time: 30 } })),
    );
    expect(ownAnswers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect((await ownerAnswers).map((a) => a.status)).toEqual(Array(12).fill(200));
    await Promise.all([wo.stop(), wh.stop()]);
    expect(ownerLent).toBeGreaterThan(0);
    expect(violations).toEqual([]);
    // LOG-4: its own request waited only behind borrowed jobs already in the backend (at most the depth).
    const waited = (await c.decisions({ kind: 'helper', event: 'native_waited_behind_borrowed' })).filter(
      (r) => r.nodeId === 'helper',
    );
    expect(waited.length).toBeGreaterThan(0);
    expect(waited.every((r) => (r.borrowedInBackend ?? 0) >= 1 && (r.borrowedInBackend ?? 0) <= 2)).toBe(true);
    expect(ownerRows(await c.decisions()).filter((r) => r.event !== 'lease_refused')).toEqual([]);
  });
});

describe('HELPER-3: load_if_unloaded cleared and the helper model not loaded', () => {
  let c: LendingCluster;
  const lanes = async () =>
    (await (
      await fetch(`${c.urls.helper}/router/v1/console/lanes`, {
        headers: { authorization: `Bearer ${c.master.token}` },
      })
    ).json()) as { lanes: { loaded: string | null; queued: number }[] };

  beforeAll(async () => {
    // No refresh tick (60 s): decisions come from owner events only, so the lease the owner holds is the master's.
    c = await startLendingCluster({
      slaves: {
        owner: { a: simText('model-a', '40ms') },
        helper: { b: simText('model-b', '150ms'), other: simText('model-other', '10ms') },
      },
      cluster: { scheduling_refresh_interval: '60s' },
    });
    for (let i = 0; i < 3; i++) expect((await c.chat('owner', 'model-a')).status).toBe(200);
    // The helper's one text lane holds another model: taking lent work for b would need a load.
    expect((await c.chat('helper', 'model-other')).status).toBe(200);
    await c.link('text', ['owner', 'a'], ['helper', 'b'], { load_if_unloaded: false });
  });
  afterAll(() => c?.stop());

  it('gets no lease (load_forbidden): the owner serves everything and the helper keeps its model', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => c.chat('owner', 'model-a')));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
    const plan = (await c.decisions({ kind: 'plan' })).filter((r) => r.ownerModel === 'a' && r.helperModel === 'b');
    expect(plan.length).toBeGreaterThan(0);
    expect(plan.every((r) => r.outcome === 'skipped' && r.reason === 'load_forbidden')).toBe(true);
    expect((await c.decisions({ event: 'lent' })).length).toBe(0);
    expect((await lanes()).lanes.map((l) => l.loaded)).toEqual(['other']);
  });

  it('hands a borrowed request that would need a load back with 409 offload_returned (borrowed_returned / load_forbidden)', async () => {
    const res = await fetch(`${c.urls.helper}/router/v1/node/worker/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${CLUSTER_TOKEN}`,
        'content-type': 'application/json',
        'x-routerdesk-borrowed-from': 'owner/a',
        'x-routerdesk-request-id': 'helper3-direct',
      },
      body: JSON.stringify({ model: 'b', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 8 }),
    });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('offload_returned');
    const rows = await eventually(
      async () => {
        const r = (await c.decisions({ kind: 'helper', event: 'borrowed_returned' })).filter(
          (x) => x.nodeId === 'helper',
        );
        return r.length ? r : undefined;
      },
      { what: 'borrowed_returned row' },
    );
    expect(rows.map((r) => r.reason)).toContain('load_forbidden');
    expect(rows.find((r) => r.reason === 'load_forbidden')).toMatchObject({
      ownerNode: 'owner',
      ownerModel: 'a',
      helperModel: 'b',
    });
    expect((await lanes()).lanes.map((l) => l.loaded)).toEqual(['other']); // no load happened
  });

  const borrowed = (id: string) =>
    fetch(`${c.urls.helper}/router/v1/node/worker/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${CLUSTER_TOKEN}`,
        'content-type': 'application/json',
        'x-routerdesk-borrowed-from': 'owner/a',
        'x-routerdesk-request-id': id,
      },
      body: JSON.stringify({ model: 'b', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 8 }),
    });

  it('lending around a switch away from b never loads b back for borrowed work; whatever comes back the owner serves', async () => {
    // b loaded, with a fit slower per job than a's: a lease of one slot (LEASE-9), each lent job ~1.2 s.
    for (let i = 0; i < 3; i++) expect((await c.chat('helper', 'model-b')).status).toBe(200);
    const since = Date.now();
    let helperView: { active: HeldItemView[] } | undefined;
    const w = watchHeld(c, 'helper', (v) => (helperView = v.models.find((m) => m.model === 'b')), 5);
    const answers = Promise.all(Array.from({ length: 10 }, () => c.chat('owner', 'model-a')));
    await eventually(() => helperView?.active.some((i) => i.borrowed), { what: 'a lent request running on b' });
    // The helper's own request for another model waits for the lane; when the lent job ends the lane switches
    // away from b, and the next request the owner lends under its lease finds b unloaded.
    const own = c.chat('helper', 'model-other');
    const results = await answers;
    await w.stop();
    expect((await own).status).toBe(200);
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(results.every((r) => r.body.model === 'model-a')).toBe(true);
    const rows = (await c.decisions()).filter((r) => r.at >= since);
    expect(rows.filter((r) => r.kind === 'plan' && r.outcome === 'granted').every((r) => r.slots === 1)).toBe(true);
    // A request lent after the switch began is handed back because b is not loaded (HELPER-3) or because the
    // helper's own request still waits (HELPER-1), and the owner serves it. (Whether the owner lends one before the
    // master's "no lease" reaches it is a race; what must never happen is b being loaded back for borrowed work.)
    const back = rows.filter((r) => r.nodeId === 'helper' && r.event === 'borrowed_returned');
    expect(back.every((r) => r.reason === 'load_forbidden' || r.reason === 'busy_on_arrival')).toBe(true);
    const returned = rows.filter((r) => r.nodeId === 'owner' && r.event === 'returned');
    expect(returned.length).toBe(back.length);
    expect(returned.every((r) => /load_forbidden|busy_on_arrival/.test(r.reason ?? ''))).toBe(true);
    for (const r of returned)
      expect(rows.filter((x) => x.event === 'lent' && x.requestId === r.requestId).length).toBe(1);
    expect((await lanes()).lanes.map((l) => l.loaded)).toEqual(['other']); // the borrowed request loaded nothing
  });

  it('a borrowed request arriving while its own request for another model waits for the lane is handed back', async () => {
    expect((await c.chat('helper', 'model-b')).status).toBe(200);
    // The lane is busy with b; the helper's own request for another model waits for it (a switch is coming).
    const ownB = c.chat('helper', 'model-b', { extra: { sim_token_time: 200 } });
    await eventually(async () => (await lanes()).lanes.some((l) => l.loaded === 'b'), { what: 'b loaded' });
    const ownOther = c.chat('helper', 'model-other');
    await eventually(async () => (await lanes()).lanes[0].queued > 0, { what: 'own request waiting for the lane' });
    // HELPER-1: no borrowed work while own work waits; HELPER-3: taking it would need loading b again.
    const res = await borrowed('helper3-switch-pending');
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('offload_returned');
    expect((await ownB).status).toBe(200);
    expect((await ownOther).status).toBe(200);
    expect((await lanes()).lanes.map((l) => l.loaded)).toEqual(['other']); // b was not loaded back for borrowed work
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLUSTER_TOKEN,
  type HeldView,
  type LendingCluster,
  simText,
  startLendingCluster,
} from '../support/lending-cluster';
import { eventually, TEST_CONSOLE_TOKEN } from '../support/node-harness';

// HOLD-4 / HELPER-5: the master withdraws lent requests at their helper (POST /router/v1/node/offload/withdraw) and
// the helper answers in one step: a borrowed request that holds the runtime is `started` and finishes (HELPER-2);
// any other id is `withdrawn`: handed back at once if it waits here (409 offload_returned, reason withdrawn), and
// remembered, so the same id arriving later is refused and never reaches the engine (a request never runs twice).
// LOG-4: each hand-back is a borrowed_returned row on the helper. HELPER-5: a helper that does not answer (SIGSTOP)
// is not taken for stalled ("no answer means busy"); once the master's health polls give it up (HEALTH-2), its lent
// requests are resolved at it, and only what no one could reach is taken back, counted.
//
// The tests play the master themselves where they can: a borrowed request is a worker call to the helper naming
// its owner. The link owner/a → helper/b exists on both ends; the master's own lending is driven only in HELPER-5.

interface Answer {
  status: number;
  body: { choices?: unknown[]; error?: { code?: string; reason?: string } };
}
interface LaneView {
  lane: string;
  loaded: string | null;
  state: string;
  inflight: number;
  queued: number;
  port: number | null;
}
interface SimStats {
  requests: number;
  completed: number;
  cancelled: number;
  active: number;
  queued: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('withdrawing borrowed requests at the helper (HOLD-4, HELPER-5)', () => {
  let c: LendingCluster;

  /** A borrowed request as the master relays it (LEASE-5): worker API, owner named in a header, its request id. */
  const borrowed = async (
    id: string,
    o: { maxTokens?: number; extra?: Record<string, unknown> } = {},
  ): Promise<Answer> => {
    const res = await fetch(`${c.urls.helper}/router/v1/node/worker/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${CLUSTER_TOKEN}`,
        'content-type': 'application/json',
        'x-routerdesk-borrowed-from': 'owner/a',
        'x-routerdesk-request-id': id,
      },
      body: JSON.stringify({
        model: 'b',
        messages: [{ role: 'user', content: 'hello there' }],
        max_tokens: o.maxTokens ?? 8,
        stream: false,
        ...o.extra,
      }),
    });
    return { status: res.status, body: (await res.json()) as Answer['body'] };
  };
  const withdraw = (body: unknown, token: string | null = CLUSTER_TOKEN) =>
    fetch(`${c.urls.helper}/router/v1/node/offload/withdraw`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
  const lanes = async (nodeId: string) =>
    (
      (await (
        await fetch(`${c.urlOf(nodeId)}/router/v1/console/lanes`, {
          headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
        })
      ).json()) as { lanes: LaneView[] }
    ).lanes;
  const textLane = async (nodeId: string) => (await lanes(nodeId)).find((l) => l.lane === 'text')!;
  /** The sim engine's counters behind a node's text lane (one engine process per load). */
  const engineStats = async (nodeId: string): Promise<SimStats & { loaded: string | null }> => {
    const lane = await textLane(nodeId);
    if (lane.port === null) throw new Error(`${nodeId}: no engine on the text lane`);
    return {
      ...((await (await fetch(`http://127.0.0.1:${lane.port}/sim/stats`)).json()) as SimStats),
      loaded: lane.loaded,
    };
  };
  const heldB = async () =>
    (await c.node<HeldView>(c.urls.helper, '/router/v1/node/held')).models.find((m) => m.model === 'b')!;
  const returnedRows = async (requestId: string, atLeast: number) =>
    eventually(
      async () => {
        const rows = (await c.decisions({ kind: 'helper', event: 'borrowed_returned' })).filter(
          (r) => r.nodeId === 'helper' && r.requestId === requestId,
        );
        return rows.length >= atLeast ? rows : undefined;
      },
      { what: `${atLeast} borrowed_returned row(s) for ${requestId}` },
    );

  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: {
        owner: { a: simText('model-a', '60ms') },
        helper: { b: simText('model-b', '10ms'), x: simText('model-x', '10ms') },
      },
      // HELPER-5 at test scale: the master asks a helper whose lent requests have not changed for 1 s.
      cluster: { offload_lent_stall_timeout: '1s' },
    });
    for (let i = 0; i < 3; i++) {
      expect((await c.chat('owner', 'model-a')).status).toBe(200);
      expect((await c.chat('helper', 'model-b')).status).toBe(200); // b's fit and load cost; b holds the lane
    }
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  });
  afterAll(async () => {
    c?.slaves.helper?.proc.kill('SIGCONT');
    await c?.stop();
  });

  it('answers started for borrowed requests holding the runtime and withdrawn for one waiting in the router queue; that one never reaches the engine and is refused when it arrives again', async () => {
    expect((await textLane('helper')).loaded).toBe('b');
    const base = await engineStats('helper');
    // One slow borrowed job at the engine, a second one behind it (depth 2: both claimed the runtime), a third
    // waiting in the helper's router queue.
    const running = borrowed('wd-running', { maxTokens: 10, extra: { sim_token_time: 300 } });
    await eventually(async () => (await engineStats('helper')).requests === base.requests + 1, {
      what: 'wd-running at the engine',
    });
    const second = borrowed('wd-second');
    await eventually(async () => (await engineStats('helper')).requests === base.requests + 2, {
      what: 'wd-second at the engine',
    });
    const waiting = borrowed('wd-waiting');
    await eventually(async () => (await heldB()).held.some((i) => i.id === 'wd-waiting' && i.borrowed), {
      what: 'wd-waiting in the router queue',
    });

    const res = await withdraw({ requestIds: ['wd-running', 'wd-second', 'wd-waiting'] });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      results: { 'wd-running': 'started', 'wd-second': 'started', 'wd-waiting': 'withdrawn' },
    });

    // Handed back at once (the running job still has seconds to go), with the reason.
    const back = await waiting;
    expect(back.status).toBe(409);
    expect(back.body.error).toMatchObject({ code: 'offload_returned', reason: 'withdrawn' });
    expect((await heldB()).held.map((i) => i.id)).not.toContain('wd-waiting');
    // HELPER-2: what had claimed the runtime finishes normally.
    const [r1, r2] = await Promise.all([running, second]);
    expect([r1.status, r2.status]).toEqual([200, 200]);
    expect(Array.isArray(r1.body.choices)).toBe(true);
    const after = await engineStats('helper');
    expect(after.loaded).toBe('b');
    expect(after.requests - base.requests).toBe(2); // the withdrawn one never reached the engine
    expect(after.completed - base.completed).toBe(2);

    // The id is remembered: a forward of it still on its way is refused and never runs.
    const late = await borrowed('wd-waiting');
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'offload_returned', reason: 'withdrawn' });
    expect((await engineStats('helper')).requests - base.requests).toBe(2);

    // LOG-4: one borrowed_returned row for the hand-back and one for the refused arrival, both `withdrawn`.
    const rows = await returnedRows('wd-waiting', 2);
    expect(rows.length).toBe(2);
    expect(
      rows.every(
        (r) =>
          r.reason === 'withdrawn' &&
          r.ownerNode === 'owner' &&
          r.ownerModel === 'a' &&
          r.helperNode === 'helper' &&
          r.helperModel === 'b',
      ),
    ).toBe(true);
    // The started ones were not handed back.
    const all = await c.decisions({ kind: 'helper', event: 'borrowed_returned' });
    expect(all.filter((r) => r.requestId === 'wd-running' || r.requestId === 'wd-second')).toEqual([]);
  });

  it('withdraws an id it never saw: the request arriving afterwards is refused, so it never runs twice', async () => {
    const base = await engineStats('helper');
    const res = await withdraw({ requestIds: ['wd-unseen'] });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ results: { 'wd-unseen': 'withdrawn' } });
    const late = await borrowed('wd-unseen');
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'offload_returned', reason: 'withdrawn' });
    const after = await engineStats('helper');
    expect(after.requests).toBe(base.requests);
    expect((await returnedRows('wd-unseen', 1)).map((r) => r.reason)).toEqual(['withdrawn']);
    // A different id is not affected by it.
    expect((await borrowed('wd-unrelated')).status).toBe(200);
  });

  it("rejects bad bodies with 400 and a missing or wrong cluster token with 401; a newer peer's extra field is ignored", async () => {
    for (const body of [
      { requestIds: [] },
      { requestIds: 'wd-x' },
      {},
      { requestIds: [''] },
      { requestIds: [7] },
      { requestIdz: ['wd-x'] },
    ]) {
      const res = await withdraw(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      await res.body?.cancel();
    }
    expect((await withdraw({ requestIds: ['wd-x'] }, null)).status).toBe(401);
    expect((await withdraw({ requestIds: ['wd-x'] }, 'not-the-cluster-token')).status).toBe(401);
    expect((await withdraw({ requestIds: ['wd-x'] }, TEST_CONSOLE_TOKEN)).status).toBe(401);
    // None of those remembered 'wd-x': it is served when it arrives.
    expect((await borrowed('wd-x')).status).toBe(200);
    // Peers of different builds interoperate: a field this build does not know is stripped, the rest is checked.
    const newer = await withdraw({ requestIds: ['wd-newer'], reason: 'cut_off' });
    expect(newer.status).toBe(200);
    expect(await newer.json()).toEqual({ results: { 'wd-newer': 'withdrawn' } });
  });

  it('withdraws a borrowed request waiting for the runtime (the lane busy with its own job): 409 withdrawn, no switch to b', async () => {
    // Its own slow job for x holds the text lane; a borrowed request for b then passes the router queue (own
    // work is running, none waiting: HELPER-1 lets it in) and waits for the lane to drain before switching.
    const own = c.chat('helper', 'model-x', { extra: { sim_token_time: 300 } });
    await eventually(
      async () => {
        const s = await engineStats('helper');
        return s.loaded === 'x' && s.active === 1;
      },
      { what: 'own x job at the engine' },
    );
    const xStats = await engineStats('helper');
    const call = borrowed('wd-lane');
    await eventually(
      async () => (await textLane('helper')).queued === 1 && (await heldB()).active.some((i) => i.id === 'wd-lane'),
      { what: 'wd-lane waiting for the lane' },
    );
    const res = await withdraw({ requestIds: ['wd-lane'] });
    expect(await res.json()).toEqual({ results: { 'wd-lane': 'withdrawn' } });
    const back = await call;
    expect(back.status).toBe(409);
    expect(back.body.error).toMatchObject({ code: 'offload_returned', reason: 'withdrawn' });
    expect((await own).status).toBe(200);
    const lane = await textLane('helper');
    expect(lane.loaded).toBe('x'); // the lane never switched to b for it
    expect(lane.queued).toBe(0);
    expect((await engineStats('helper')).requests).toBe(xStats.requests);
    expect((await returnedRows('wd-lane', 1)).map((r) => r.reason)).toEqual(['withdrawn']);
  });

  it('HELPER-5, HEALTH-2: a silent helper (SIGSTOP) is not stalled; once the health polls give it up each lent request is resolved at it, run twice only where counted', async () => {
    expect((await c.chat('helper', 'model-b')).status).toBe(200); // b back on the lane: lending needs no switch
    const since = Date.now();
    const helperBase = await engineStats('helper');
    const ownerBase = await engineStats('owner');
    // The master's warnings when a helper does not answer its stall check or its withdrawal (both: "it keeps them").
    const noAnswer = () => (c.master.output().match(/helper did not answer/g) ?? []).length;
    const silentBefore = noAnswer();
    const givenUp = () => (c.master.output().match(/node unhealthy/g) ?? []).length;
    const givenUpBefore = givenUp();
    // Long jobs (2 s each wherever they run): the owner runs some and the master leases b (faster) for the rest.
    const n = 6;
    const answers = Promise.all(
      Array.from({ length: n }, () => c.chat('owner', 'model-a', { extra: { sim_token_time: 250 } })),
    );
    const runningIds = await eventually(
      async () => {
        const s = await engineStats('helper');
        const ids = (await heldB()).active.filter((i) => i.borrowed).map((i) => i.id);
        return s.requests > helperBase.requests && s.active >= 1 && ids.length ? ids : undefined;
      },
      { what: 'a lent request running on the helper', timeoutMs: 20_000 },
    ).catch((err: Error) => {
      // Say why, if the master lost sight of a node meanwhile (a loaded machine): its warnings name it.
      throw new Error(
        `${err.message}\nmaster warnings:\n${c.master
          .output()
          .split('\n')
          .filter((l) => /unhealthy|lending poll failed/.test(l))
          .slice(-5)
          .join('\n')}`,
      );
    });

    const helper = c.slaves.helper.proc;
    helper.kill('SIGSTOP');
    try {
      // Longer than the stall timeout (1 s) plus the master's 3 s ask timeout, and until the master has met the
      // silence twice (two stall checks, or a check and a withdrawal): whatever it asked, no answer means busy.
      // Or until its health polls gave the helper up (HEALTH-2): then no relay to it is left to ask about.
      await sleep(4_500);
      await eventually(() => noAnswer() >= silentBefore + 2 || givenUp() > givenUpBefore, {
        what: 'the master twice without an answer from the silent helper, or the helper given up',
        timeoutMs: 20_000,
      });
    } finally {
      helper.kill('SIGCONT');
    }

    const results = await answers;
    expect(results.map((r) => r.status)).toEqual(Array(n).fill(200));
    // The helper's word on what was taken back from it arrives once it answers again (a notice every 2 s).
    const rows = await eventually(
      async () => {
        const all = (await c.decisions()).filter((r) => r.at >= since);
        const fate = (reason: string) => all.filter((r) => r.event === 'lent_fate' && r.reason === reason).length;
        return fate('taken_back') === fate('dropped') + fate('started_twice') && all;
      },
      { what: 'the helper told of every request taken back from it', timeoutMs: 20_000 },
    );
    const lent = rows.filter((r) => r.nodeId === 'owner' && r.event === 'lent');
    const returned = rows.filter((r) => r.nodeId === 'owner' && r.event === 'returned');
    for (const id of runningIds) expect(lent.filter((r) => r.requestId === id).length).toBe(1);
    // HELPER-5 never took them: a silent helper counts as busy.
    expect(returned.filter((r) => r.reason === 'helper_stalled')).toEqual([]);
    // HEALTH-2 may have: each one the owner took back because no one could reach the helper is counted, and a run
    // at both engines only where the helper said it had started it.
    const startedTwice = rows.filter((r) => r.event === 'lent_fate' && r.reason === 'started_twice').length;
    const servedByHelper = lent.length - returned.length;
    const helperRuns = (await engineStats('helper')).requests - helperBase.requests;
    const ownerRuns = (await engineStats('owner')).requests - ownerBase.requests;
    expect(helperRuns + ownerRuns).toBe(n + startedTwice);
    expect(helperRuns).toBe(servedByHelper + startedTwice);
  });
});

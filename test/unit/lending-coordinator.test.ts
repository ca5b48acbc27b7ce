import { describe, expect, it } from 'vitest';
import { Coordinator, type CoordinatorDeps } from '../../src-router/lending/coordinator';
import type { RelayAnswer, RelayRequest } from '../../src-router/lending/ports';
import type { LinkSpec, NodeState } from '../../src-router/lending/types';

// The decider around the pure planner: coalescing (LEASE-2), relay refusals (LEASE-8), stall returns (HELPER-5).
const link: LinkSpec = {
  id: 'l1',
  lane: 'text',
  owner: { nodeId: 'o', model: 'a' },
  helper: { nodeId: 'h', model: 'b' },
  loadIfUnloaded: true,
  restoreAfterBorrow: false,
};
const fit = { kind: 'constant' as const, work: 8, meanMs: 200, samples: 5 };
const model = (id: string, held: number) => ({
  model: id,
  lane: 'text' as const,
  loaded: true,
  held,
  heldWork: Array(held).fill(8),
  active: held ? 2 : 0,
  lentOut: 0,
  fit,
  loadMs: 300,
  contextsize: 4096,
  eligible: true,
  multimodal: false,
  meanHeldTokens: held ? 40 : null,
});
const node = (nodeId: string, models: ReturnType<typeof model>[]): NodeState => ({
  nodeId,
  reachable: true,
  acceptsBorrowed: true,
  ownIdleMs: 10_000,
  sinceOwnRequestMs: 10_000,
  lanes: { text: models[0]?.model ?? null },
  borrowedInFlight: 0,
  models,
});
const log = { warn() {}, info() {}, error() {}, debug() {} } as unknown as CoordinatorDeps['log'];

function coordinator(over: Partial<CoordinatorDeps> = {}) {
  let polls = 0;
  let release: (() => void) | undefined;
  const rows: Record<string, unknown>[] = [];
  const c = new Coordinator({
    nodeId: 'm',
    links: () => [link],
    localState: () => node('m', []),
    remotes: () => [
      { nodeId: 'o', url: 'http://o' },
      { nodeId: 'h', url: 'http://h' },
    ],
    pollRemote: async (url) => {
      polls++;
      if (url === 'http://o') await new Promise<void>((r) => (release = r));
      return url === 'http://o' ? node('o', [model('a', 6)]) : node('h', [model('b', 0)]);
    },
    pushLease: () => {},
    forwardRemote: async (): Promise<RelayAnswer> => ({ kind: 'answered', status: 200, body: {} }),
    serveLocal: async () => ({ kind: 'answered', status: 200, body: {} }),
    settings: { probeIdleMs: 5000, switchProbeFactor: 12, leaseTtlMs: 5000 },
    refreshIntervalMs: 60_000,
    stallTimeoutMs: 1000,
    askBorrowed: async () => 0,
    withdraw: async (_h, ids) => Object.fromEntries(ids.map((id) => [id, 'withdrawn' as const])),
    answerOf: async () => ({ state: 'unknown' as const }),
    fateWaitMs: 10_000,
    decisions: { add: (r) => rows.push(r as unknown as Record<string, unknown>) },
    log,
    ...over,
  });
  return { c, rows, polls: () => polls, release: () => release?.() };
}

describe('coordinator', () => {
  it('coalesces a burst of 1,000 events into one decision in flight and one queued; every event is answered', async () => {
    const { c, release } = coordinator();
    const answers = Array.from({ length: 1000 }, () => c.event({ nodeId: 'o', model: 'a' }, 'enqueued'));
    expect(c.decisionsMade).toBe(1);
    for (let i = 0; i < 5 && c.decisionsMade < 2; i++) {
      release();
      await new Promise((r) => setImmediate(r));
    }
    release();
    const leases = await Promise.all(answers);
    expect(c.decisionsMade).toBe(2);
    expect(leases.every((l) => l?.helper.model === 'b' && l.slots === 2)).toBe(true); // equal speeds: 2 slots (LEASE-9)
  });

  it('takes the state an owner sent with its event instead of polling it back; a decision queued behind another polls (LEASE-3, issue #14)', async () => {
    const polled: string[] = [];
    const { c, rows } = coordinator({
      pollRemote: async (url) => {
        polled.push(url);
        return url === 'http://o' ? node('o', [model('a', 6)]) : node('h', [model('b', 0)]);
      },
    });
    const sent = node('o', [model('a', 3)]);
    const first = c.event({ nodeId: 'o', model: 'a' }, 'enqueued', sent);
    const second = c.event({ nodeId: 'o', model: 'a' }, 'enqueued', sent);
    await Promise.all([first, second]);
    expect(c.decisionsMade).toBe(2);
    expect(polled).toEqual(['http://h', 'http://o', 'http://h']);
    // The first decision planned from the sent state (3 held), the queued one from the poll (6 held).
    expect(rows.filter((r) => r.kind === 'plan').map((r) => r.held)).toEqual([3, 6]);
  });

  it('owners whose events share a queued decision hear it through their answers, not also by a push', async () => {
    const links: LinkSpec[] = [
      link,
      { ...link, id: 'l2', owner: { nodeId: 'o', model: 'c' }, helper: { nodeId: 'h', model: 'd' } },
    ];
    const pushed: string[] = [];
    let release: (() => void) | undefined;
    const { c } = coordinator({
      links: () => links,
      pollRemote: async (url) => {
        if (url === 'http://o' && !release) await new Promise<void>((r) => (release = r));
        return url === 'http://o'
          ? node('o', [model('a', 6), model('c', 6)])
          : node('h', [model('b', 0), model('d', 0)]);
      },
      pushLease: (owner) => void pushed.push(`${owner.nodeId}/${owner.model}`),
    });
    const tick = c.decide('tick');
    const answers = [
      c.event({ nodeId: 'o', model: 'a' }, 'enqueued'),
      c.event({ nodeId: 'o', model: 'c' }, 'enqueued'),
    ];
    await new Promise((r) => setImmediate(r));
    release!();
    await tick;
    const pushedByTick = [...pushed];
    const leases = await Promise.all(answers);
    expect(c.decisionsMade).toBe(2);
    // One helper lane: a is lent to b, c hears "no lease" (both owners have held work).
    expect(leases.map((l) => l?.helper.model ?? null)).toEqual(['b', null]);
    // The tick's decision pushed to both owners; the queued one, which both events share, to neither.
    expect(pushedByTick.sort()).toEqual(['o/a', 'o/c']);
    expect(pushed.sort()).toEqual(['o/a', 'o/c']);
  });

  it("polls an owner whose event carries another node's state", async () => {
    const polled: string[] = [];
    const { c } = coordinator({
      pollRemote: async (url) => (
        polled.push(url), url === 'http://o' ? node('o', [model('a', 6)]) : node('h', [model('b', 0)])
      ),
    });
    await c.event({ nodeId: 'o', model: 'a' }, 'enqueued', node('h', [model('b', 0)]));
    expect(polled.sort()).toEqual(['http://h', 'http://o']);
  });

  it('writes one plan row per owner–helper pair per decision', async () => {
    const { c, rows, release } = coordinator();
    const p = c.event({ nodeId: 'o', model: 'a' }, 'enqueued');
    release();
    await p;
    expect(rows.filter((r) => r.kind === 'plan')).toEqual([
      expect.objectContaining({
        ownerNode: 'o',
        ownerModel: 'a',
        helperNode: 'h',
        helperModel: 'b',
        event: 'granted',
        trigger: 'enqueued',
      }),
    ]);
  });

  it('refuses a relay without a live lease and logs relay_refused no_live_lease', async () => {
    const { c, rows } = coordinator();
    const req: RelayRequest = {
      requestId: 'r1',
      owner: { nodeId: 'o', model: 'a' },
      helper: { nodeId: 'h', model: 'b' },
      endpoint: 'chat',
      json: {},
    };
    expect(await c.relay(req, new AbortController().signal)).toMatchObject({
      kind: 'refused',
      reason: 'no_live_lease',
    });
    expect(rows).toEqual([
      expect.objectContaining({ event: 'relay_refused', reason: 'no_live_lease', requestId: 'r1' }),
    ]);
  });

  describe('issue #25: a forward whose fate is unknown is resolved at the helper before anyone runs it again', () => {
    const req: RelayRequest = {
      requestId: 'r1',
      owner: { nodeId: 'o', model: 'a' },
      helper: { nodeId: 'h', model: 'b' },
      endpoint: 'chat',
      json: {},
    };
    const broke = async (): Promise<RelayAnswer> => ({
      kind: 'unknown',
      message: 'the forward to the helper broke off: ETIMEDOUT',
    });
    async function leased(over: Partial<CoordinatorDeps>) {
      const k = coordinator({ forwardRemote: broke, ...over });
      const lease = k.c.event({ nodeId: 'o', model: 'a' }, 'enqueued');
      k.release();
      expect((await lease)?.helper.nodeId).toBe('h');
      return k;
    }
    const fates = (rows: Record<string, unknown>[]) => rows.filter((r) => r.event === 'lent_fate').map((r) => r.reason);

    it('not started there: withdrawn, and it comes back to the owner (never run twice)', async () => {
      const { c, rows } = await leased({});
      expect(await c.relay(req, new AbortController().signal)).toEqual({ kind: 'returned', reason: 'withdrawn' });
      expect(fates(rows)).toEqual(['withdrawn']);
      expect(rows.find((r) => r.event === 'lent_fate')).toMatchObject({
        requestId: 'r1',
        helperNode: 'h',
        ownerNode: 'o',
        linkId: 'l1',
      });
    });

    it('started there: its answer is fetched from the helper, waiting while it runs', async () => {
      const states = [{ state: 'running' as const }, { state: 'answered' as const, status: 200, body: { id: 'x' } }];
      const { c, rows } = await leased({
        withdraw: async () => ({ r1: 'started' }),
        answerOf: async () => states.shift()!,
      });
      expect(await c.relay(req, new AbortController().signal)).toEqual({
        kind: 'answered',
        status: 200,
        body: { id: 'x' },
      });
      expect(states).toEqual([]);
      expect(fates(rows)).toEqual(['answered']);
    });

    it('failed there: refused forward_failed, so the owner runs it', async () => {
      const { c, rows } = await leased({
        withdraw: async () => ({ r1: 'started' }),
        answerOf: async () => ({ state: 'failed' }),
      });
      expect(await c.relay(req, new AbortController().signal)).toMatchObject({
        kind: 'refused',
        reason: 'forward_failed',
      });
      expect(fates(rows)).toEqual(['failed']);
    });

    it('the helper refuses the master: unknown for the owner, which may still reach it, to resolve; never a refusal it runs again', async () => {
      const refused = Object.assign(new Error('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
      const { c, rows } = await leased({ withdraw: async () => Promise.reject(refused) });
      expect(await c.relay(req, new AbortController().signal)).toMatchObject({ kind: 'unknown' });
      expect(fates(rows)).toEqual(['unresolved']);
      expect(rows.find((r) => r.event === 'lent_fate')?.details).toMatchObject({
        why: 'the helper refuses connections',
      });
      expect(rows.some((r) => r.event === 'relay_refused')).toBe(false);
    });

    it('the master cannot ask the helper: the fate stays unknown for the owner to resolve, never a refusal', async () => {
      const { c, rows } = await leased({ withdraw: async () => Promise.reject(new Error('timed out')) });
      expect(await c.relay(req, new AbortController().signal)).toMatchObject({ kind: 'unknown' });
      expect(fates(rows)).toEqual(['unresolved']);
      expect(rows.some((r) => r.event === 'relay_refused')).toBe(false);
    });

    it('HEALTH-2: a helper that turns unhealthy loses its lent requests at once, as unknown for the owner to resolve', async () => {
      let healthy = true;
      const { c, rows } = await leased({
        forwardRemote: (_url, _req, signal) =>
          new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
        remotes: () => [{ nodeId: 'o', url: 'http://o' }, ...(healthy ? [{ nodeId: 'h', url: 'http://h' }] : [])],
      });
      const relayed = c.relay(req, new AbortController().signal);
      c.membersChanged(); // still healthy: nothing changes
      healthy = false;
      c.membersChanged();
      expect(await relayed).toMatchObject({ kind: 'unknown' });
      expect(fates(rows)).toEqual(['unresolved']);
      expect(rows.some((r) => r.event === 'relay_refused')).toBe(false);
    });

    it('still running when the wait is over: unknown, not a refusal', async () => {
      let clock = 0;
      const { c, rows } = await leased({
        now: () => clock,
        withdraw: async () => ({ r1: 'started' }),
        answerOf: async (_h, _id, waitMs) => ((clock += waitMs), { state: 'running' }),
      });
      expect(await c.relay(req, new AbortController().signal)).toMatchObject({ kind: 'unknown' });
      expect(fates(rows)).toEqual(['unresolved']);
    });
  });

  it('returns every request lent to a helper that stalled and no longer runs borrowed work (HELPER-5)', async () => {
    let clock = 0;
    const pending: ((a: RelayAnswer) => void)[] = [];
    const { c, release } = coordinator({
      now: () => clock,
      forwardRemote: (_url, _req, signal) =>
        new Promise((resolve, reject) => {
          pending.push(resolve);
          signal.addEventListener('abort', () => reject(signal.reason));
        }),
    });
    const lease = c.event({ nodeId: 'o', model: 'a' }, 'enqueued');
    release();
    expect((await lease)?.helper.nodeId).toBe('h');
    const req: RelayRequest = {
      requestId: 'r1',
      owner: { nodeId: 'o', model: 'a' },
      helper: { nodeId: 'h', model: 'b' },
      endpoint: 'chat',
      json: {},
    };
    const relayed = c.relay(req, new AbortController().signal);
    clock += 500;
    await c.checkStalls();
    expect(pending).toHaveLength(1); // not stalled yet
    clock += 600;
    await c.checkStalls();
    expect(await relayed).toEqual({ kind: 'returned', reason: 'helper_stalled' });
  });

  it('keeps lent requests with a helper that still runs borrowed work, is too old to say, or does not answer (HELPER-5)', async () => {
    for (const running of [2, null, 'unreachable' as const]) {
      let clock = 0;
      const askBorrowed = async () => {
        if (running === 'unreachable') throw new Error('connect ECONNREFUSED');
        return running;
      };
      const { c, release } = coordinator({ now: () => clock, askBorrowed, forwardRemote: () => new Promise(() => {}) });
      const lease = c.event({ nodeId: 'o', model: 'a' }, 'enqueued');
      release();
      await lease;
      let settled = false;
      void c
        .relay(
          {
            requestId: 'r',
            owner: { nodeId: 'o', model: 'a' },
            helper: { nodeId: 'h', model: 'b' },
            endpoint: 'chat',
            json: {},
          },
          new AbortController().signal,
        )
        .then(() => (settled = true));
      clock += 5000;
      await c.checkStalls();
      await new Promise((r) => setImmediate(r));
      expect(settled).toBe(false);
    }
  });

  it('a stall return withdraws at the helper first: only requests it confirms withdrawn come back (HELPER-5, never run twice)', async () => {
    for (const answer of ['partial', 'unreachable'] as const) {
      let clock = 0;
      const withdrawn: string[][] = [];
      const { c, release } = coordinator({
        now: () => clock,
        withdraw: async (_h, ids) => {
          withdrawn.push(ids);
          if (answer === 'unreachable') throw new Error('timeout');
          return { r1: 'withdrawn', r2: 'started' };
        },
        forwardRemote: (_u, _r, signal) =>
          new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      });
      const lease = c.event({ nodeId: 'o', model: 'a' }, 'enqueued');
      release();
      await lease;
      const out = (id: string) =>
        c.relay(
          {
            requestId: id,
            owner: { nodeId: 'o', model: 'a' },
            helper: { nodeId: 'h', model: 'b' },
            endpoint: 'chat',
            json: {},
          },
          new AbortController().signal,
        );
      const settled: Record<string, unknown> = {};
      for (const id of ['r1', 'r2']) void out(id).then((a) => (settled[id] = a));
      clock += 1100;
      await c.checkStalls();
      await new Promise((r) => setImmediate(r));
      expect(withdrawn).toEqual([['r1', 'r2']]);
      expect(settled).toEqual(answer === 'partial' ? { r1: { kind: 'returned', reason: 'helper_stalled' } } : {});
    }
  });

  it("cuts an overdue lent request off only on the helper's word that it has not started it (HOLD-4, HELPER-2)", async () => {
    for (const started of [false, true, 'unreachable' as const]) {
      const withdraw = async (_h: string, ids: string[]) => {
        if (started === 'unreachable') throw new Error('connect ECONNREFUSED');
        return Object.fromEntries(ids.map((id) => [id, started ? ('started' as const) : ('withdrawn' as const)]));
      };
      const { c, release } = coordinator({
        withdraw,
        forwardRemote: (_u, _r, signal) =>
          new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      });
      const lease = c.event({ nodeId: 'o', model: 'a' }, 'enqueued');
      release();
      await lease;
      const relayed = c.relay(
        {
          requestId: 'r9',
          owner: { nodeId: 'o', model: 'a' },
          helper: { nodeId: 'h', model: 'b' },
          endpoint: 'chat',
          json: {},
        },
        new AbortController().signal,
      );
      expect(await c.cutOff('r9')).toBe(!started);
      if (!started) expect(await relayed).toEqual({ kind: 'returned', reason: 'cut_off' });
    }
  });
});

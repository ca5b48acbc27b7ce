import { describe, expect, it } from 'vitest';
import { OwnerSide, QUIET_REPORT_MS, type ScheduleFn } from '../../src-router/lending/owner-side';
import type { MasterPort } from '../../src-router/lending/ports';
import type { LeaseGrant } from '../../src-router/lending/types';
import { type Dispatch, ModelQueue, type QueueItem } from '../../src-router/queue';
import type { DecisionInput } from '../../src-router/store';

// The owner's side around a real router queue: lent rows (LOG-3), holds only for lendable work (HOLD-1/2), top-up (QUEUE-2).
const log = { warn() {}, info() {}, error() {}, debug() {} } as never;
const grant = (o: Partial<LeaseGrant> = {}): LeaseGrant => ({
  linkId: 'l1',
  owner: { nodeId: 'o', model: 'a' },
  helper: { nodeId: 'h', model: 'b' },
  slots: 2,
  ttlMs: 60_000,
  probe: false,
  ownerJobMs: 10_000,
  helperJobMs: 1000,
  helperSwitchMs: 0,
  measured: true,
  helperContextsize: 4096,
  ...o,
});
let n = 0;
const item = (o: Partial<QueueItem> = {}): QueueItem => ({
  id: `r${++n}`,
  arrivedAt: n,
  stream: false,
  bodyBytes: 100,
  work: 8,
  borrowed: false,
  returned: false,
  state: 'queued',
  ...o,
});

function setup(opts: { hold?: boolean } = {}) {
  let clock = 1_000_000;
  const rows: DecisionInput[] = [];
  let owner!: OwnerSide;
  // The master answers every event with the lease the owner holds (a renewal), so only the test changes it.
  const master: MasterPort = {
    event: async () => owner.lease('a'),
    relay: () => new Promise(() => {}),
    cutOff: async () => false,
    cancel: async () => {},
  };
  const queue = new ModelQueue(
    'a',
    2,
    (event) => {
      if (event === 'enqueued' || event === 'finished')
        owner.onQueueEvent('a', event === 'enqueued' ? 'enqueued' : 'completed');
      else owner.dispatch('a');
    },
    () => clock,
  );
  owner = new OwnerSide({
    nodeId: 'o',
    master,
    decisions: { add: (r) => rows.push(r) },
    log,
    now: () => clock,
    queueOf: () => queue,
    isOwner: () => true,
    // LLM-2 sizes: the body's bytes stand for its tokens here
    tokensOf: (_id, it) => it.bodyBytes,
    holdEnabled: opts.hold ?? true,
  });
  queue.holdPolicy = (it, first) => owner.holdSecond('a', it, first);
  const seen = new Map<string, Dispatch>();
  const add = (it: QueueItem) => void queue.enqueue(it).then((d) => seen.set(it.id, d));
  return { queue, owner, rows, seen, add, advance: (ms: number) => (clock += ms) };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('owner side (LEASE-4, LOG-3)', () => {
  it('one lent row per lent request, written as it leaves, requests out counting it', async () => {
    const s = setup({ hold: false });
    const items = Array.from({ length: 6 }, () => item());
    items.forEach(s.add);
    await tick();
    s.owner.apply('a', grant());
    await tick();
    const lent = s.rows.filter((r) => r.event === 'lent');
    expect(lent.map((r) => [r.requestId, r.requestsOut])).toEqual([
      [items[2].id, 1],
      [items[3].id, 2],
    ]);
    expect([...s.seen.values()].filter((d) => d.kind === 'lend')).toHaveLength(2);
  });

  it("issue #25: slots are per helper: requests still out at an earlier lease's helper do not take the new helper's slots", async () => {
    const s = setup({ hold: false });
    const items = Array.from({ length: 8 }, () => item());
    items.forEach(s.add);
    await tick();
    s.owner.apply('a', grant());
    await tick();
    expect(s.rows.filter((r) => r.event === 'lent').map((r) => r.helperNode)).toEqual(['h', 'h']);
    // The master moves the lease to another helper while both requests are still out at the first one.
    s.owner.apply('a', grant({ helper: { nodeId: 'h2', model: 'b' } }));
    await tick();
    const lent = s.rows.filter((r) => r.event === 'lent');
    expect(lent.map((r) => r.helperNode)).toEqual(['h', 'h', 'h2', 'h2']);
    expect(s.queue.lentAt('h/b')).toBe(2);
    expect(s.queue.lentAt('h2/b')).toBe(2);
  });

  it('a lease refused for a model that is not an owner still says how many requests are out', () => {
    const s = setup();
    const helperOnly = new OwnerSide({
      nodeId: 'o',
      master: {
        event: async () => null,
        relay: () => new Promise(() => {}),
        cutOff: async () => false,
        cancel: async () => {},
      },
      decisions: { add: (r) => s.rows.push(r) },
      log,
      now: () => 0,
      queueOf: () => s.queue,
      isOwner: () => false,
      holdEnabled: true,
    });
    expect(helperOnly.apply('a', grant())).toBe(false);
    expect(s.rows.at(-1)).toMatchObject({ event: 'lease_refused', reason: 'not_an_owner', requestsOut: 0, slots: 2 });
  });
});

describe('holds and top-up (HOLD-1/2, QUEUE-2)', () => {
  /** The owner generates r1; the lease's one slot is busy with a lent request; the next request may be held. */
  async function heldScenario(next: Partial<QueueItem>, lease: Partial<LeaseGrant> = {}) {
    const s = setup();
    const first = item();
    s.add(first);
    await tick();
    s.owner.apply('a', grant({ slots: 1, ...lease }));
    const lentOne = item();
    s.add(lentOne); // fills the second slot (nothing is lent yet, so it is not held)
    await tick();
    const out = item();
    s.add(out);
    await tick();
    expect(s.seen.get(out.id)?.kind).toBe('lend');
    s.queue.finished(lentOne);
    await tick();
    const candidate = item(next);
    s.add(candidate);
    await tick();
    return { s, candidate };
  }

  it('a plain request is held for the faster helper while its lent slot is busy', async () => {
    const { s, candidate } = await heldScenario({});
    expect(candidate.state).toBe('held');
    expect(s.rows.filter((r) => r.event === 'held_for_helper').map((r) => r.requestId)).toEqual([candidate.id]);
  });

  it("a stream, a returned request or one too large for the helper's window is never held: it goes to the engine", async () => {
    for (const next of [{ stream: true }, { returned: true }, { bodyBytes: 5000 }]) {
      const { s, candidate } = await heldScenario(next);
      expect(s.seen.get(candidate.id)?.kind).toBe('engine');
      expect(s.rows.some((r) => r.event === 'held_for_helper')).toBe(false);
    }
  });

  it('a held request goes to the owner when the lease becomes a probe or loses its measured speeds', async () => {
    for (const change of [{ probe: true, slots: 1 as const }, { measured: false }]) {
      const { s, candidate } = await heldScenario({});
      expect(candidate.state).toBe('held');
      s.owner.apply('a', grant({ slots: 1, ...change }));
      await tick();
      expect(s.seen.get(candidate.id)?.kind).toBe('engine');
    }
  });

  it('the owner is topped back up the moment a held request is lent', async () => {
    // helper 6 s a job against the owner's 10 s: worth holding for at first
    const { s, candidate } = await heldScenario({}, { helperJobMs: 6000 });
    expect(candidate.state).toBe('held');
    const behind = item();
    s.add(behind);
    await tick();
    expect(s.queue.activeCount).toBe(1);
    // 9 s on, the owner's job is nearly done: owner 1 + 10 s beats the helper's 6 + 6 s for the request behind
    s.advance(9000);
    // the lent slot frees: the held request goes to the helper, and the request behind it fills the owner's second slot
    const lent = s.queue.view().lent[0];
    s.queue.lentDone(lent);
    s.owner.dispatch('a');
    await tick();
    expect(s.seen.get(candidate.id)?.kind).toBe('lend');
    expect(s.seen.get(behind.id)?.kind).toBe('engine');
    expect(s.queue.activeCount).toBe(2);
  });
});

describe('reports to the master (LEASE-2)', () => {
  /** An owner whose reports run when the test says (the node runs them after the request's turn) and whose master answers when told. */
  function reporting() {
    const sent: string[] = [];
    const answers: ((g: LeaseGrant | null) => void)[] = [];
    const deferred: (() => void)[] = [];
    const master: MasterPort = {
      event: (_o, trigger) => {
        sent.push(trigger);
        return new Promise((r) => answers.push(r));
      },
      relay: () => new Promise(() => {}),
      cutOff: async () => false,
      cancel: async () => {},
    };
    const queue = new ModelQueue('a', 2);
    // Timers on a clock the test moves (the quiet report's wait).
    let clock = 0;
    const timers: { at: number; fn: () => void }[] = [];
    const schedule: ScheduleFn = (fn, ms) => {
      const t = { at: clock + ms, fn };
      timers.push(t);
      return () => {
        const i = timers.indexOf(t);
        if (i >= 0) timers.splice(i, 1);
      };
    };
    const advance = (ms: number) => {
      clock += ms;
      for (const t of timers.filter((x) => x.at <= clock)) {
        timers.splice(timers.indexOf(t), 1);
        t.fn();
      }
    };
    const owner = new OwnerSide({
      nodeId: 'o',
      master,
      decisions: { add: (row) => rows.push(row) },
      log,
      now: () => clock,
      queueOf: () => queue,
      isOwner: () => true,
      holdEnabled: false,
      deferReport: (fn) => deferred.push(fn),
      schedule,
    });
    const rows: DecisionInput[] = [];
    const runDeferred = () => deferred.splice(0).forEach((fn) => fn());
    return { owner, sent, answers, deferred, runDeferred, queue, advance, timers, rows };
  }

  it('a lease answered to an event keeps the time from the event to the lease on its row (the decision latency a replay takes)', async () => {
    const r = reporting();
    const leaseRows = () => r.rows.filter((x) => x.event === 'lease_updated').map((x) => x.details);
    r.owner.onQueueEvent('a', 'enqueued');
    r.advance(10); // the report goes after the request's turn: counted from the event
    r.runDeferred();
    r.advance(27);
    // Events while the report is out go in the next one, counted from the first of them.
    r.owner.onQueueEvent('a', 'enqueued');
    r.advance(3);
    r.owner.onQueueEvent('a', 'enqueued');
    r.answers[0](grant());
    await tick();
    expect(leaseRows()).toEqual([{ probe: false, ttlMs: 60_000, measured: true, decisionMs: 40 }]);
    r.advance(8);
    r.answers[1](grant({ slots: 1 }));
    await tick();
    expect(leaseRows()[1]).toEqual({ probe: false, ttlMs: 60_000, measured: true, decisionMs: 11 });
    // A finished job while nothing waits is due only after its quiet wait: counted from then.
    r.owner.onQueueEvent('a', 'completed');
    r.advance(QUIET_REPORT_MS);
    r.advance(4);
    r.answers[2](grant({ slots: 2 }));
    await tick();
    expect(leaseRows()[2]).toEqual({ probe: false, ttlMs: 60_000, measured: true, decisionMs: 4 });
    // A lease pushed on the master's tick answers no event: no latency.
    r.owner.apply('a', grant({ slots: 1 }));
    expect(leaseRows().at(-1)).toEqual({ probe: false, ttlMs: 60_000, measured: true });
  });

  it('sends nothing on the turn of the event; the events of one turn go as one report, the last trigger', () => {
    const r = reporting();
    r.owner.onQueueEvent('a', 'enqueued');
    r.owner.onQueueEvent('a', 'completed');
    expect(r.sent).toEqual([]);
    expect(r.deferred).toHaveLength(1);
    r.runDeferred();
    expect(r.sent).toEqual(['completed']);
  });

  it('one report in flight and at most one behind it: later events share the queued one', async () => {
    const r = reporting();
    r.owner.onQueueEvent('a', 'enqueued');
    r.runDeferred();
    r.owner.onQueueEvent('a', 'completed');
    r.owner.onQueueEvent('a', 'borrowed_completed');
    r.runDeferred();
    expect(r.sent).toEqual(['enqueued']);
    r.answers[0](null);
    await tick();
    expect(r.sent).toEqual(['enqueued', 'borrowed_completed']);
    r.answers[1](null);
    await tick();
    expect(r.sent).toHaveLength(2);
  });

  it(`a finished job while nothing waits is reported after ${QUIET_REPORT_MS} ms, together with the ones that follow (issue #14)`, () => {
    const r = reporting();
    r.owner.onQueueEvent('a', 'completed');
    r.advance(QUIET_REPORT_MS / 2);
    r.owner.onQueueEvent('a', 'completed');
    r.runDeferred();
    expect(r.sent).toEqual([]);
    r.advance(QUIET_REPORT_MS / 2);
    r.runDeferred();
    expect(r.sent).toEqual(['completed']);
    expect(r.timers).toHaveLength(0);
  });

  it('an event while something waits is reported at once and takes the waiting report with it', async () => {
    const r = reporting();
    r.owner.onQueueEvent('a', 'completed');
    expect(r.timers).toHaveLength(1);
    // Work waits now: a new held request, then a finished job with work waiting, go on the next turn, not after the wait.
    for (let i = 0; i < 3; i++) void r.queue.enqueue(item());
    expect(r.queue.waitingCount).toBe(1);
    r.owner.onQueueEvent('a', 'enqueued');
    expect(r.timers).toHaveLength(0);
    r.runDeferred();
    expect(r.sent).toEqual(['enqueued']);
    r.answers[0](null);
    await tick();
    r.owner.onQueueEvent('a', 'completed');
    r.runDeferred();
    expect(r.sent).toEqual(['enqueued', 'completed']);
    r.advance(QUIET_REPORT_MS);
    r.answers[1](null);
    await tick();
    expect(r.sent).toHaveLength(2);
  });

  it('finished jobs while a report is in flight, with nothing waiting, wait quietly after it too', async () => {
    const r = reporting();
    const items = [item(), item(), item()];
    for (const it of items) void r.queue.enqueue(it);
    r.owner.onQueueEvent('a', 'enqueued');
    r.runDeferred();
    expect(r.sent).toEqual(['enqueued']);
    // While the report is out, a job finishes (the waiting request starts) and another one: nothing waits now.
    r.queue.finished(items[0]);
    expect(r.queue.waitingCount).toBe(0);
    r.owner.onQueueEvent('a', 'completed');
    r.owner.onQueueEvent('a', 'completed');
    r.answers[0](null);
    await tick();
    r.runDeferred();
    expect(r.sent).toEqual(['enqueued']);
    r.advance(QUIET_REPORT_MS);
    expect(r.sent).toEqual(['enqueued', 'completed']);
  });
});

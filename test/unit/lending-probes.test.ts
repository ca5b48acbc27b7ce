import { describe, expect, it } from 'vitest';
import { plan } from '../../src-router/lending/planner';
import { compareProbeCandidates, probeIdleThresholdMs, probeTiming } from '../../src-router/lending/probes';
import type { LinkSpec, ModelState, NodeState, PlanInput } from '../../src-router/lending/types';
import { link, model, NOW, node, per, SETTINGS as S } from '../support/plan-fixtures';

const input = (nodes: NodeState[], links: LinkSpec[], o: Partial<PlanInput> = {}): PlanInput => ({
  now: NOW,
  trigger: 'probe_due',
  links,
  nodes,
  live: [],
  settings: S,
  ...o,
});
/** Owner A: 2 held + 2 at the engine, 1 s per job: drains in 4 s, faster than any helper below. */
const ownerA = (o: Partial<ModelState> = {}) =>
  node('o', [model('a', { held: 2, heldWork: [1, 1], active: 2, fit: per(1000), ...o })]);
const slowHelper = (idle: number, m: Partial<ModelState> = {}, o: Partial<NodeState> = {}) =>
  node('h', [model('b', { fit: per(20_000), ...m })], { ownIdleMs: idle, ...o });
const L = [link('L1', 'o/a', 'h/b')];

describe('probes after idleness (PROBE-1, PROBE-2)', () => {
  it('a helper the cost rule rejects gets a one-request probe once idle for offload_probe_idle', () => {
    const r = plan(input([ownerA(), slowHelper(5000)], L));
    expect(r.rows[0]).toMatchObject({
      outcome: 'probe',
      reason: 'cost_rejected',
      slots: 1,
      ownerDrainMs: 4000,
      helperServiceMs: 20_000,
      helperIdleMs: 5000,
      probeDueAt: null,
    });
    expect(r.leases).toEqual([
      {
        linkId: 'L1',
        owner: { nodeId: 'o', model: 'a' },
        helper: { nodeId: 'h', model: 'b' },
        slots: 1,
        ttlMs: 30_000,
        probe: true,
        ownerJobMs: 1000,
        helperJobMs: 20_000,
        helperSwitchMs: 0,
        measured: false,
        helperContextsize: null,
        helperMultimodal: false,
      },
    ]);
    expect(r.noLease).toEqual([]);
    expect(r.wakeAt).toBeNull();
  });

  it('not yet idle long enough: skipped, and the master wakes the moment it will be (PROBE-4)', () => {
    const r = plan(input([ownerA(), slowHelper(4000)], L));
    expect(r.rows[0]).toMatchObject({
      outcome: 'skipped',
      reason: 'cost_rejected',
      slots: 0,
      helperIdleMs: 4000,
      probeDueAt: NOW + 1000,
    });
    expect(r.wakeAt).toBe(NOW + 1000);
    expect(r.noLease).toEqual([{ nodeId: 'o', model: 'a' }]);
    // Deciding again at wakeAt with the helper still quiet: the probe goes.
    const again = plan(input([ownerA(), slowHelper(5000)], L, { now: NOW + 1000, trigger: 'probe_due' }));
    expect(again.rows[0]).toMatchObject({ outcome: 'probe', at: NOW + 1000, trigger: 'probe_due' });
  });

  it('a helper that must switch models waits twelve times as long', () => {
    const h = (idle: number) =>
      node('h', [model('b', { loaded: false, loadMs: 10_000, fit: per(20_000) }), model('c', { loadMs: 10_000 })], {
        ownIdleMs: idle,
      });
    const early = plan(input([ownerA(), h(59_999)], L));
    expect(early.rows[0]).toMatchObject({
      outcome: 'skipped',
      reason: 'cost_rejected',
      helperSwitchMs: 10_000,
      helperRestoreMs: 10_000,
      probeDueAt: NOW + 1,
    });
    expect(early.wakeAt).toBe(NOW + 1);
    const due = plan(input([ownerA(), h(60_000)], L));
    expect(due.rows[0]).toMatchObject({ outcome: 'probe', slots: 1 });
    expect(due.leases[0]).toMatchObject({ probe: true, helperSwitchMs: 10_000 });
  });

  it('probes even when neither side is priced yet', () => {
    const r = plan(
      input(
        [
          ownerA({ fit: null }),
          slowHelper(60_000, { fit: null, loaded: false, loadMs: null }, { lanes: { image: null } }),
        ],
        L,
      ),
    );
    expect(r.rows[0]).toMatchObject({
      outcome: 'probe',
      reason: 'owner_unpriced',
      ownerDrainMs: null,
      helperServiceMs: null,
      helperSwitchMs: null,
      slots: 1,
    });
    expect(r.leases[0]).toMatchObject({ probe: true, ownerJobMs: null, helperJobMs: null, measured: false });
  });

  it('probes whatever the cost reason: unpriced switch or restore, recently busy', () => {
    const sw = plan(
      input([ownerA(), slowHelper(60_000, { loaded: false, loadMs: null }, { lanes: { image: null } })], L),
    );
    expect(sw.rows[0]).toMatchObject({ outcome: 'probe', reason: 'switch_unpriced' });
    const rest = plan(
      input(
        [
          ownerA(),
          node('h', [model('b', { loaded: false, loadMs: 1, fit: per(1) }), model('c')], { ownIdleMs: 60_000 }),
        ],
        L,
      ),
    );
    expect(rest.rows[0]).toMatchObject({ outcome: 'probe', reason: 'restore_unpriced' });
  });

  it('PROBE-3: borrowed work does not count as busy: a helper that just served a lent job is probed again at once', () => {
    // ownIdleMs runs through borrowed work: the snapshot reports idle from its own work only.
    const r = plan(
      input([ownerA(), slowHelper(300_000, {}, { borrowedInFlight: 0 })], L, { trigger: 'borrowed_completed' }),
    );
    expect(r.rows[0]).toMatchObject({ outcome: 'probe', trigger: 'borrowed_completed' });
  });
});

describe('what stops a probe (PROBE-2)', () => {
  it('not accepting borrowed work: no probe and no wake-up', () => {
    const r = plan(input([ownerA(), slowHelper(4000, {}, { acceptsBorrowed: false })], L));
    expect(r.rows[0]).toMatchObject({ outcome: 'skipped', reason: 'helper_not_accepting', probeDueAt: null });
    expect(r.wakeAt).toBeNull();
  });

  it('the link does not allow the load', () => {
    const h = node('h', [model('b', { loaded: false, loadMs: 1 })], { ownIdleMs: 600_000, lanes: { image: null } });
    expect(plan(input([ownerA(), h], [link('L1', 'o/a', 'h/b', { loadIfUnloaded: false })])).rows[0]).toMatchObject({
      outcome: 'skipped',
      reason: 'load_forbidden',
    });
  });

  it('text: the context window does not hold the work', () => {
    const o = ownerA({ lane: 'text', meanHeldTokens: 9000 });
    const h = slowHelper(600_000, { lane: 'text', contextsize: 4096 });
    const r = plan(input([o, h], [link('L1', 'o/a', 'h/b', { lane: 'text' })]));
    expect(r.rows[0]).toMatchObject({ outcome: 'skipped', reason: 'context_too_small' });
    expect(r.wakeAt).toBeNull();
  });

  it('claimed by another owner', () => {
    const r = plan(
      input([ownerA(), slowHelper(600_000)], L, {
        live: [
          {
            owner: { nodeId: 'z', model: 'q' },
            helper: { nodeId: 'h', model: 'b' },
            slots: 1,
            probe: true,
            expiresAt: NOW + 1,
          },
        ],
      }),
    );
    expect(r.rows[0]).toMatchObject({ outcome: 'skipped', reason: 'helper_claimed' });
  });
});

describe('one lease per owner', () => {
  it('a helper chosen by cost takes the lease; an idle one that does not pay off is not probed and nothing wakes', () => {
    const nodes = [
      ownerA({ held: 8, heldWork: Array(8).fill(1), fit: per(10_000) }),
      node('f', [model('b', { fit: per(5000) })]),
      slowHelper(4000, { fit: per(200_000) }),
    ];
    const r = plan(input(nodes, [link('L1', 'o/a', 'h/b'), link('L2', 'o/a', 'f/b')]));
    expect(r.rows.map((x) => [x.helper.nodeId, x.outcome, x.reason, x.probeDueAt])).toEqual([
      ['f', 'granted', null, null],
      ['h', 'skipped', 'cost_rejected', null],
    ]);
    expect(r.wakeAt).toBeNull();
  });

  it('of several helpers due for a probe one gets it: no switch first, then the longest idle; the others are outranked', () => {
    const h1 = node('h1', [model('b', { loaded: false, loadMs: 10 })], { ownIdleMs: 900_000, lanes: { image: null } });
    const h2 = node('h2', [model('b')], { ownIdleMs: 6000 });
    const h3 = node('h3', [model('b')], { ownIdleMs: 7000 });
    const links = [link('L1', 'o/a', 'h1/b'), link('L2', 'o/a', 'h2/b'), link('L3', 'o/a', 'h3/b')];
    const r = plan(input([ownerA({ fit: null }), h1, h2, h3], links));
    expect(r.rows.map((x) => `${x.helper.nodeId}:${x.outcome}:${x.reason}`)).toEqual([
      'h1:skipped:outranked',
      'h2:skipped:outranked',
      'h3:probe:owner_unpriced',
    ]);
    expect(r.leases.map((l) => l.helper.nodeId)).toEqual(['h3']);
  });

  it('wakeAt is the earliest due probe across owners', () => {
    const nodes = [
      ownerA(),
      node('p', [model('q', { held: 1, heldWork: [1], fit: per(1) })]),
      slowHelper(1000),
      node('g', [model('b', { fit: per(50_000) })], { ownIdleMs: 3000 }),
    ];
    const r = plan(input(nodes, [link('L1', 'o/a', 'h/b'), link('L2', 'p/q', 'g/b')]));
    expect(r.rows.map((x) => x.probeDueAt)).toEqual([NOW + 4000, NOW + 2000]);
    expect(r.wakeAt).toBe(NOW + 2000);
  });
});

describe('probe timing', () => {
  it('threshold is probe_idle, ×12 for a switch; dueAt is now + what is missing', () => {
    expect(probeIdleThresholdMs(S, false)).toBe(5000);
    expect(probeIdleThresholdMs(S, true)).toBe(60_000);
    expect(probeTiming(100, 2000, S, false)).toEqual({ due: false, dueAt: 3100, thresholdMs: 5000 });
    expect(probeTiming(100, 70_000, S, true)).toEqual({ due: true, dueAt: 100, thresholdMs: 60_000 });
  });

  it('candidate order is total and deterministic', () => {
    const c = (helperKey: string, mustSwitch: boolean, idleMs: number) => ({
      helperKey,
      linkId: 'L',
      mustSwitch,
      idleMs,
    });
    const sorted = [c('b', false, 5), c('a', true, 99), c('c', false, 9), c('a', false, 5)].sort(
      compareProbeCandidates,
    );
    expect(sorted.map((x) => `${x.helperKey}${x.mustSwitch ? '!' : ''}${x.idleMs}`)).toEqual([
      'c9',
      'a5',
      'b5',
      'a!99',
    ]);
  });
});

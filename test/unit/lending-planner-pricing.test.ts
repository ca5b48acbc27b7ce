import { describe, expect, it } from 'vitest';
import { plan } from '../../src-router/lending/planner';
import type { LinkSpec, ModelState, NodeState, PlanInput, PlanRow } from '../../src-router/lending/types';
import { link, model, NOW, node, per } from '../support/plan-fixtures';

const input = (nodes: NodeState[], links: LinkSpec[], o: Partial<PlanInput> = {}): PlanInput => ({
  now: NOW,
  trigger: 'enqueued',
  links,
  nodes,
  live: [],
  settings: { probeIdleMs: 5000, switchProbeFactor: 12, leaseTtlMs: 30_000 },
  ...o,
});
/** Owner A on node o: `held` held requests of work 1 behind 2 at its engine, 10 s per job. */
const ownerA = (held = 8, o: Partial<ModelState> = {}) =>
  node('o', [model('a', { held, heldWork: Array(held).fill(1), active: 2, fit: per(10_000), ...o })]);
const only = (rows: PlanRow[]) => {
  expect(rows).toHaveLength(1);
  return rows[0];
};

describe('the spec example: 10 requests for A, depth 2 → 8 held (LEASE-9, PRICE-1)', () => {
  it('a faster helper gets 2 slots', () => {
    const r = plan(
      input([ownerA(), node('h', [model('b', { fit: per(8000) })], { ownIdleMs: 100 })], [link('L1', 'o/a', 'h/b')]),
    );
    expect(r.leases).toEqual([
      {
        linkId: 'L1',
        owner: { nodeId: 'o', model: 'a' },
        helper: { nodeId: 'h', model: 'b' },
        slots: 2,
        ttlMs: 30_000,
        probe: false,
        ownerJobMs: 10_000,
        helperJobMs: 8000,
        helperSwitchMs: 0,
        measured: true,
        helperContextsize: null,
        helperMultimodal: false,
      },
    ]);
    expect(r.noLease).toEqual([]);
    expect(only(r.rows)).toEqual({
      at: NOW,
      trigger: 'enqueued',
      linkId: 'L1',
      owner: { nodeId: 'o', model: 'a' },
      helper: { nodeId: 'h', model: 'b' },
      held: 8,
      backlog: 10,
      ownerDrainMs: 100_000,
      helperSwitchMs: 0,
      helperServiceMs: 8000,
      serviceSource: 'helper',
      helperBusyMs: 0,
      helperIdleMs: 100,
      ownerJobMs: 10_000,
      helperRestoreMs: 0,
      probeDueAt: null,
      outcome: 'granted',
      reason: null,
      slots: 2,
    });
  });

  it("an equally fast helper still gets 2 (at most the owner's time per job)", () => {
    expect(
      plan(input([ownerA(), node('h', [model('b', { fit: per(10_000) })])], [link('L1', 'o/a', 'h/b')])).leases[0]
        .slots,
    ).toBe(2);
  });

  it('a slower helper that still pays off gets 1', () => {
    const r = plan(input([ownerA(), node('h', [model('b', { fit: per(15_000) })])], [link('L1', 'o/a', 'h/b')]));
    expect(r.leases[0]).toMatchObject({ slots: 1, helperJobMs: 15_000, ownerJobMs: 10_000 });
    expect(only(r.rows)).toMatchObject({
      outcome: 'granted',
      slots: 1,
      helperServiceMs: 15_000,
      ownerDrainMs: 100_000,
    });
  });

  it('the owner drain prices held, pinned (streams) and engine requests; only held ones count as held', () => {
    const r = plan(
      input(
        [ownerA(8, { pinnedWork: [1, 1] }), node('h', [model('b', { fit: per(8000) })])],
        [link('L1', 'o/a', 'h/b')],
      ),
    );
    expect(only(r.rows)).toMatchObject({ held: 8, backlog: 12, ownerDrainMs: 120_000 });
  });
});

describe('a deep backlog justifies a switch that a shallow one does not (PRICE-1)', () => {
  const helper = () => node('h', [model('b', { loaded: false, loadMs: 30_000, fit: per(10_000) })], { ownIdleMs: 100 });

  it('shallow: 2 held + 2 at the engine drain in 40 s; load + first job = 40 s → cost_rejected', () => {
    const r = plan(input([ownerA(2), helper()], [link('L1', 'o/a', 'h/b')]));
    expect(only(r.rows)).toMatchObject({
      outcome: 'skipped',
      reason: 'cost_rejected',
      ownerDrainMs: 40_000,
      helperSwitchMs: 30_000,
      helperServiceMs: 10_000,
      helperRestoreMs: 0,
      slots: 0,
    });
    expect(r.leases).toEqual([]);
    expect(r.noLease).toEqual([{ nodeId: 'o', model: 'a' }]);
  });

  it('deep: 8 held drain in 100 s → granted, the load included in the lease', () => {
    const r = plan(input([ownerA(8), helper()], [link('L1', 'o/a', 'h/b')]));
    expect(only(r.rows)).toMatchObject({
      outcome: 'granted',
      reason: null,
      ownerDrainMs: 100_000,
      helperSwitchMs: 30_000,
      slots: 2,
    });
    expect(r.leases[0]).toMatchObject({ helperSwitchMs: 30_000, slots: 2 });
  });
});

describe("PRICE-3: a helper without its own fit is priced with the owner's fit for the same work", () => {
  it('first the owner fallback (speeds not measured on both sides), then its own fit', () => {
    const fallback = plan(input([ownerA(), node('h', [model('b')])], [link('L1', 'o/a', 'h/b')]));
    expect(only(fallback.rows)).toMatchObject({
      outcome: 'granted',
      serviceSource: 'owner_fallback',
      helperServiceMs: 10_000,
      slots: 2,
    });
    expect(fallback.leases[0]).toMatchObject({ measured: false, helperJobMs: 10_000 });
    const own = plan(input([ownerA(), node('h', [model('b', { fit: per(12_000) })])], [link('L1', 'o/a', 'h/b')]));
    expect(only(own.rows)).toMatchObject({
      outcome: 'granted',
      serviceSource: 'helper',
      helperServiceMs: 12_000,
      slots: 1,
    });
    expect(own.leases[0].measured).toBe(true);
  });

  it("the fallback is the owner's fit for the same work: a scaled owner fit prices the oldest held request", () => {
    const o = node('o', [
      model('a', {
        held: 2,
        heldWork: [100, 300],
        active: 0,
        fit: { kind: 'scaled', interceptMs: 1000, slopeMsPerWork: 10, samples: 5 },
      }),
    ]);
    const r = plan(input([o, node('h', [model('b')])], [link('L1', 'o/a', 'h/b')]));
    expect(only(r.rows)).toMatchObject({
      ownerJobMs: 2000,
      helperServiceMs: 2000,
      ownerDrainMs: 6000,
      serviceSource: 'owner_fallback',
      outcome: 'granted',
    });
  });
});

describe('PRICE-5/6/7: displacing what the helper holds', () => {
  const helper = (displacedLoadMs: number | null, o: Partial<NodeState> = {}) =>
    node(
      'h',
      [model('b', { loaded: false, loadMs: 30_000, fit: per(10_000) }), model('c', { loadMs: displacedLoadMs })],
      { ownIdleMs: 100, ...o },
    );

  it("the displaced model's reload is priced in: worth it at 50 s", () => {
    const r = plan(input([ownerA(), helper(50_000)], [link('L1', 'o/a', 'h/b')]));
    expect(only(r.rows)).toMatchObject({
      outcome: 'granted',
      helperSwitchMs: 30_000,
      helperServiceMs: 10_000,
      helperRestoreMs: 50_000,
      ownerDrainMs: 100_000,
    });
  });

  it('not worth it when getting its own model back costs more than the owner saves (30 + 10 + 70 ≥ 100)', () => {
    const r = plan(input([ownerA(), helper(70_000)], [link('L1', 'o/a', 'h/b')]));
    expect(only(r.rows)).toMatchObject({
      outcome: 'skipped',
      reason: 'cost_rejected',
      helperRestoreMs: 70_000,
      ownerDrainMs: 100_000,
    });
    // The same helper with an empty lane displaces nothing and pays off.
    const empty = plan(input([ownerA(), helper(70_000, { lanes: { image: null } })], [link('L1', 'o/a', 'h/b')]));
    expect(only(empty.rows)).toMatchObject({ outcome: 'granted', helperRestoreMs: 0 });
  });

  it('restore_unpriced: the displaced model has no measured load time', () => {
    const r = plan(input([ownerA(), helper(null)], [link('L1', 'o/a', 'h/b')]));
    expect(only(r.rows)).toMatchObject({
      outcome: 'skipped',
      reason: 'restore_unpriced',
      helperRestoreMs: null,
      helperSwitchMs: 30_000,
      ownerDrainMs: 100_000,
    });
  });

  it('restore_unpriced also when the displaced model is not in the snapshot at all', () => {
    const r = plan(
      input(
        [
          ownerA(),
          node('h', [model('b', { loaded: false, loadMs: 30_000, fit: per(1000) })], { lanes: { image: 'ghost' } }),
        ],
        [link('L1', 'o/a', 'h/b')],
      ),
    );
    expect(only(r.rows)).toMatchObject({ reason: 'restore_unpriced' });
  });

  it('helper_recently_busy: served its own request more recently than switch + way back (30 + 50 s)', () => {
    const busy = plan(input([ownerA(), helper(50_000, { sinceOwnRequestMs: 79_999 })], [link('L1', 'o/a', 'h/b')]));
    expect(only(busy.rows)).toMatchObject({
      outcome: 'skipped',
      reason: 'helper_recently_busy',
      helperSwitchMs: 30_000,
      helperRestoreMs: 50_000,
    });
    const quiet = plan(input([ownerA(), helper(50_000, { sinceOwnRequestMs: 80_000 })], [link('L1', 'o/a', 'h/b')]));
    expect(only(quiet.rows).outcome).toBe('granted');
  });

  it('no detour, no PRICE-7: a helper with the linked model loaded is never recently busy', () => {
    const r = plan(
      input(
        [ownerA(), node('h', [model('b', { fit: per(8000) })], { sinceOwnRequestMs: 1 })],
        [link('L1', 'o/a', 'h/b')],
      ),
    );
    expect(only(r.rows).outcome).toBe('granted');
  });
});

describe('unpriced pairs (PRICE-2/3/4)', () => {
  it('owner_unpriced: the owner has no fit', () => {
    const r = plan(
      input([ownerA(8, { fit: null }), node('h', [model('b', { fit: per(1000) })])], [link('L1', 'o/a', 'h/b')]),
    );
    expect(only(r.rows)).toMatchObject({
      outcome: 'skipped',
      reason: 'owner_unpriced',
      ownerDrainMs: null,
      ownerJobMs: null,
      helperServiceMs: 1000,
      serviceSource: 'helper',
    });
  });

  it('owner_unpriced: a constant owner fit cannot price its whole backlog (other sizes stay unpriced)', () => {
    const o = node('o', [
      model('a', {
        held: 2,
        heldWork: [5, 7],
        active: 0,
        fit: { kind: 'constant', work: 5, meanMs: 10_000, samples: 5 },
      }),
    ]);
    const r = plan(input([o, node('h', [model('b', { fit: per(1000) })])], [link('L1', 'o/a', 'h/b')]));
    expect(only(r.rows)).toMatchObject({
      reason: 'owner_unpriced',
      ownerJobMs: 10_000,
      ownerDrainMs: null,
      helperServiceMs: 1000,
    });
  });

  it('switch_unpriced: the helper must load the linked model and never measured a load', () => {
    const r = plan(
      input(
        [
          ownerA(),
          node('h', [model('b', { loaded: false, loadMs: null, fit: per(1000) })], { lanes: { image: null } }),
        ],
        [link('L1', 'o/a', 'h/b')],
      ),
    );
    expect(only(r.rows)).toMatchObject({
      outcome: 'skipped',
      reason: 'switch_unpriced',
      helperSwitchMs: null,
      helperServiceMs: 1000,
      ownerDrainMs: 100_000,
    });
  });

  it("service_unpriced: no helper fit and the owner's fit cannot price the work", () => {
    const o = node('o', [
      model('a', {
        held: 2,
        heldWork: [7, 7],
        active: 0,
        fit: { kind: 'constant', work: 5, meanMs: 10_000, samples: 5 },
      }),
    ]);
    const r = plan(input([o, node('h', [model('b')])], [link('L1', 'o/a', 'h/b')]));
    expect(only(r.rows)).toMatchObject({
      outcome: 'skipped',
      reason: 'service_unpriced',
      serviceSource: 'owner_fallback',
      helperServiceMs: null,
      ownerJobMs: null,
    });
  });

  it("service_unpriced: the helper's own constant fit is for another size (it has a fit: no fallback)", () => {
    const r = plan(
      input(
        [ownerA(), node('h', [model('b', { fit: { kind: 'constant', work: 2, meanMs: 500, samples: 5 } })])],
        [link('L1', 'o/a', 'h/b')],
      ),
    );
    expect(only(r.rows)).toMatchObject({
      reason: 'service_unpriced',
      serviceSource: 'helper',
      helperServiceMs: null,
      ownerDrainMs: 100_000,
    });
  });
});

describe("work already at the helper's engine is priced in (PRICE-1)", () => {
  // Owner: 2 held + 2 at its engine, 10 s a job → drains in 40 s.
  it("the helper's own jobs at its engine come before a lent one: idle 8 s helper pays off, the same helper with 4 jobs at its engine does not", () => {
    const helperWith = (active: number) => node('h', [model('b', { fit: per(8000), active })]);
    const idle = plan(input([ownerA(2), helperWith(0)], [link('L1', 'o/a', 'h/b')]));
    expect(only(idle.rows)).toMatchObject({ outcome: 'granted', helperBusyMs: 0 });
    const busy = plan(input([ownerA(2), helperWith(4)], [link('L1', 'o/a', 'h/b')]));
    // 4 × 8 + 8 = 40 s is not sooner than the owner's 40 s
    expect(only(busy.rows)).toMatchObject({
      outcome: 'skipped',
      reason: 'cost_rejected',
      helperBusyMs: 32_000,
      helperServiceMs: 8000,
    });
  });

  it("borrowed jobs waiting at the helper count too; so do the displaced model's jobs a switch waits to drain", () => {
    const waiting = plan(
      input([ownerA(2), node('h', [model('b', { fit: per(8000), borrowedWaiting: 4 })])], [link('L1', 'o/a', 'h/b')]),
    );
    expect(only(waiting.rows)).toMatchObject({ reason: 'cost_rejected', helperBusyMs: 32_000 });
    const other = model('c', { lane: 'image', active: 1, loadMs: 1000 });
    const switching = plan(
      input(
        [ownerA(8), node('h', [model('b', { fit: per(8000), loaded: false, loadMs: 2000 }), other])],
        [link('L1', 'o/a', 'h/b')],
      ),
    );
    // 2 (load) + 8 (c's job, priced as one helper job) + 8 + 1 (restore) < 100 s
    expect(only(switching.rows)).toMatchObject({
      outcome: 'granted',
      helperBusyMs: 8000,
      helperSwitchMs: 2000,
      helperRestoreMs: 1000,
    });
  });
});

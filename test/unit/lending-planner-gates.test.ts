import { describe, expect, it } from 'vitest';
import { plan } from '../../src-router/lending/planner';
import type { LinkSpec, LiveLease, ModelState, NodeState, PlanInput, PlanRow } from '../../src-router/lending/types';
import { link, model, NOW, node, per } from '../support/plan-fixtures';

const input = (nodes: NodeState[], links: LinkSpec[], o: Partial<PlanInput> = {}): PlanInput => ({
  now: NOW,
  trigger: 'tick',
  links,
  nodes,
  live: [],
  settings: { probeIdleMs: 5000, switchProbeFactor: 12, leaseTtlMs: 30_000 },
  ...o,
});
const owner = (name: string, held = 8, o: Partial<ModelState> = {}) =>
  model(name, { held, heldWork: Array(held).fill(1), active: 2, fit: per(10_000), ...o });
const fast = (name = 'b', o: Partial<ModelState> = {}) => model(name, { fit: per(8000), ...o });
const reasons = (rows: PlanRow[]) =>
  rows.map((r) => `${r.owner.model}->${r.helper.nodeId}/${r.helper.model}:${r.outcome}:${r.reason ?? '-'}`);
const lease = (ownerModel: string, helper: string, o: Partial<LiveLease> = {}): LiveLease => ({
  owner: { nodeId: 'o', model: ownerModel },
  helper: { nodeId: helper.split('/')[0], model: helper.split('/')[1] },
  slots: 2,
  probe: false,
  expiresAt: NOW + 10_000,
  ...o,
});

describe('who is considered (LEASE-4, QUEUE-4)', () => {
  it('only owners with held work, and only the helpers their links name', () => {
    const nodes = [
      node('o', [owner('a'), owner('idle', 0)]),
      node('h', [fast('b')]),
      node('x', [fast('z', { fit: per(1) })]),
    ];
    const r = plan(input(nodes, [link('L1', 'o/a', 'h/b'), link('L2', 'o/idle', 'x/z')]));
    expect(reasons(r.rows)).toEqual(['a->h/b:granted:-']);
    expect(r.noLease).toEqual([]);
  });

  it('a helper-only model never lends: its held work gets no rows and no answer', () => {
    const nodes = [
      node('o', [owner('a', 0)]),
      node('h', [fast('b', { held: 5, heldWork: [1, 1, 1, 1, 1], active: 2 })]),
    ];
    const r = plan(input(nodes, [link('L1', 'o/a', 'h/b')]));
    expect(r.rows).toEqual([]);
    expect(r.leases).toEqual([]);
    expect(r.noLease).toEqual([]);
  });

  it('one row per owner–helper pair even when two links name the same pair', () => {
    const r = plan(
      input([node('o', [owner('a')]), node('h', [fast()])], [link('L2', 'o/a', 'h/b'), link('L1', 'o/a', 'h/b')]),
    );
    expect(r.rows.map((x) => x.linkId)).toEqual(['L1']);
  });
});

describe('gates, each with its skip reason (LOG-2)', () => {
  it('helper_unreachable: the node did not answer the poll, or is not in the snapshot', () => {
    const r = plan(
      input(
        [node('o', [owner('a')]), node('h', [fast()], { reachable: false, ownIdleMs: 900_000 })],
        [link('L1', 'o/a', 'h/b'), link('L2', 'o/a', 'gone/m')],
      ),
    );
    expect(reasons(r.rows)).toEqual(['a->gone/m:skipped:helper_unreachable', 'a->h/b:skipped:helper_unreachable']);
    expect(r.rows[0]).toMatchObject({
      ownerDrainMs: 100_000,
      ownerJobMs: 10_000,
      helperServiceMs: null,
      helperIdleMs: 0,
      slots: 0,
    });
    expect(r.rows[1]).toMatchObject({ ownerDrainMs: 100_000, helperIdleMs: 900_000, slots: 0 });
  });

  it('helper_not_accepting: the helper has its own queue (HELPER-1); numbers still filled', () => {
    const r = plan(
      input(
        [node('o', [owner('a')]), node('h', [fast()], { acceptsBorrowed: false, ownIdleMs: 60_000 })],
        [link('L1', 'o/a', 'h/b')],
      ),
    );
    expect(r.rows[0]).toMatchObject({
      outcome: 'skipped',
      reason: 'helper_not_accepting',
      ownerDrainMs: 100_000,
      helperServiceMs: 8000,
      helperSwitchMs: 0,
      probeDueAt: null,
    });
    expect(r.wakeAt).toBeNull();
  });

  it('load_forbidden: the helper holds another model and its link may not load', () => {
    const h = node('h', [fast('b', { loaded: false, loadMs: 1000 }), model('c', { loadMs: 1000 })], {
      ownIdleMs: 600_000,
    });
    const r = plan(input([node('o', [owner('a')]), h], [link('L1', 'o/a', 'h/b', { loadIfUnloaded: false })]));
    expect(r.rows[0]).toMatchObject({
      outcome: 'skipped',
      reason: 'load_forbidden',
      helperSwitchMs: 1000,
      helperRestoreMs: 1000,
    });
    // The same link with the linked model loaded lends.
    const loaded = plan(
      input([node('o', [owner('a')]), node('h', [fast()])], [link('L1', 'o/a', 'h/b', { loadIfUnloaded: false })]),
    );
    expect(loaded.rows[0].outcome).toBe('granted');
  });

  it("helper_claimed: another owner's live lease claims the helper's runtime lane", () => {
    const nodes = [node('o', [owner('a'), owner('x', 3)]), node('h', [fast('b'), model('c', { loaded: false })])];
    const r = plan(input(nodes, [link('L1', 'o/a', 'h/b')], { live: [lease('x', 'h/c')] }));
    expect(r.rows[0]).toMatchObject({ outcome: 'skipped', reason: 'helper_claimed', helperServiceMs: 8000 });
  });

  it('issue #25: an owner whose held work is gone gives its lease back at once: the helper is free for another owner', () => {
    const nodes = [node('o', [owner('a'), owner('x', 0)]), node('h', [fast('b'), model('c', { loaded: false })])];
    const r = plan(input(nodes, [link('L1', 'o/a', 'h/b'), link('L2', 'o/x', 'h/c')], { live: [lease('x', 'h/c')] }));
    expect(reasons(r.rows)).toEqual(['a->h/b:granted:-']);
    expect(r.noLease).toEqual([{ nodeId: 'o', model: 'x' }]);
    // Unseen owners keep their claim (their backlog is not known), and so do owners that still hold work.
    const unseen = plan(
      input(
        [node('o', [owner('a')]), node('h', [fast('b'), model('c', { loaded: false })])],
        [link('L1', 'o/a', 'h/b')],
        { live: [lease('x', 'h/c')] },
      ),
    );
    expect(unseen.rows[0]).toMatchObject({ outcome: 'skipped', reason: 'helper_claimed' });
    expect(unseen.noLease).toEqual([{ nodeId: 'o', model: 'a' }]);
  });

  it("the owner's own live lease is renewed, and an expired lease claims nothing", () => {
    const nodes = [node('o', [owner('a')]), node('h', [fast()])];
    expect(plan(input(nodes, [link('L1', 'o/a', 'h/b')], { live: [lease('a', 'h/b')] })).rows[0].outcome).toBe(
      'granted',
    );
    expect(
      plan(input(nodes, [link('L1', 'o/a', 'h/b')], { live: [lease('x', 'h/b', { expiresAt: NOW })] })).rows[0].outcome,
    ).toBe('granted');
  });

  it('helper_claimed across owners in one plan: the owner with more held work plans first', () => {
    const nodes = [node('o', [owner('a', 3)]), node('p', [owner('q', 6)]), node('h', [fast()])];
    const r = plan(input(nodes, [link('L1', 'o/a', 'h/b'), link('L2', 'p/q', 'h/b')]));
    expect(reasons(r.rows)).toEqual(['q->h/b:granted:-', 'a->h/b:skipped:helper_claimed']);
    expect(r.leases.map((l) => l.owner.model)).toEqual(['q']);
    expect(r.noLease).toEqual([{ nodeId: 'o', model: 'a' }]);
  });

  it('two owners contend for one helper: the one whose backlog takes longest to drain alone plans first, not the one with more held', () => {
    // q: 6 held + 2 at its engine at 1 s a job (8 s); a: 3 held + 2 at 10 s a job (50 s). The helper goes to a.
    const nodes = [
      node('o', [owner('a', 3)]),
      node('p', [owner('q', 6, { fit: per(1000) })]),
      node('h', [fast('b', { fit: per(800) })]),
    ];
    const r = plan(input(nodes, [link('L1', 'o/a', 'h/b'), link('L2', 'p/q', 'h/b')]));
    expect(reasons(r.rows)).toEqual(['a->h/b:granted:-', 'q->h/b:skipped:helper_claimed']);
    expect(r.noLease).toEqual([{ nodeId: 'p', model: 'q' }]);
  });

  it('a live lease yields its helper to an owner whose backlog takes more than twice as long to drain; not to one of similar need', () => {
    // x holds the lease with 1 held + 2 at its engine (30 s); a has 8 held + 2 (100 s > 2 × 30 s): a takes the helper.
    const links = [link('L1', 'o/a', 'h/b'), link('L2', 'o/x', 'h/b')];
    const taken = plan(
      input([node('o', [owner('a'), owner('x', 1)]), node('h', [fast()])], links, { live: [lease('x', 'h/b')] }),
    );
    expect(reasons(taken.rows)).toEqual(['a->h/b:granted:-', 'x->h/b:skipped:helper_claimed']);
    expect(taken.noLease).toEqual([{ nodeId: 'o', model: 'x' }]);
    // x with 4 held (60 s): a's 100 s is not more than twice that, so x keeps the helper it holds.
    const kept = plan(
      input([node('o', [owner('a'), owner('x', 4)]), node('h', [fast()])], links, { live: [lease('x', 'h/b')] }),
    );
    expect(reasons(kept.rows)).toEqual(['a->h/b:skipped:helper_claimed', 'x->h/b:granted:-']);
    // A holder whose drain is unpriced keeps its claim.
    const unpriced = plan(
      input([node('o', [owner('a'), owner('x', 1, { fit: null })]), node('h', [fast()])], links, {
        live: [lease('x', 'h/b')],
      }),
    );
    expect(unpriced.rows[0]).toMatchObject({ owner: { model: 'a' }, outcome: 'skipped', reason: 'helper_claimed' });
  });

  it('a helper on another lane of the same node is not claimed', () => {
    const h = node('h', [fast('b'), model('t', { lane: 'text', fit: per(1000), contextsize: 8192, eligible: true })]);
    const o = node('o', [owner('a'), owner('txt', 4, { lane: 'text', meanHeldTokens: 1000 })]);
    const r = plan(
      input([o, h], [link('L1', 'o/a', 'h/b'), link('L2', 'o/txt', 'h/t', { lane: 'text' })], {
        live: [lease('a', 'h/b')],
      }),
    );
    expect(reasons(r.rows)).toEqual(['a->h/b:granted:-', 'txt->h/t:granted:-']);
  });
});

describe('text lending gates (LLM-1, LLM-2)', () => {
  const txtOwner = (o: Partial<ModelState> = {}) =>
    node('o', [owner('a', 8, { lane: 'text', contextsize: 8192, meanHeldTokens: 3000, ...o })]);
  const txtHelper = (o: Partial<ModelState> = {}) => node('h', [fast('b', { lane: 'text', contextsize: 4096, ...o })]);
  const tl = (o: Partial<LinkSpec> = {}) => [link('L1', 'o/a', 'h/b', { lane: 'text', ...o })];

  it('granted when the helper window holds the mean estimated held size', () => {
    const r = plan(input([txtOwner(), txtHelper()], tl()));
    expect(r.rows[0]).toMatchObject({ outcome: 'granted', slots: 2 });
    // The owner checks each withdrawn request against the helper's window (LLM-2).
    expect(r.leases[0].helperContextsize).toBe(4096);
    expect(plan(input([txtOwner({ meanHeldTokens: 4096 }), txtHelper()], tl())).rows[0].outcome).toBe('granted');
  });

  it('context_too_small: the window cannot hold it', () => {
    expect(plan(input([txtOwner({ meanHeldTokens: 4097 }), txtHelper()], tl())).rows[0]).toMatchObject({
      outcome: 'skipped',
      reason: 'context_too_small',
      helperServiceMs: 8000,
    });
  });

  it('context_too_small: no token profile, no estimate', () => {
    expect(plan(input([txtOwner({ meanHeldTokens: null }), txtHelper()], tl())).rows[0].reason).toBe(
      'context_too_small',
    );
  });

  it('helper_ineligible: serves concurrently, states no context window, or a multimodal mismatch', () => {
    expect(plan(input([txtOwner(), txtHelper({ eligible: false })], tl())).rows[0].reason).toBe('helper_ineligible');
    expect(plan(input([txtOwner(), txtHelper({ contextsize: null })], tl())).rows[0].reason).toBe('helper_ineligible');
    expect(plan(input([txtOwner({ multimodal: true }), txtHelper()], tl())).rows[0].reason).toBe('helper_ineligible');
    expect(plan(input([txtOwner(), txtHelper({ multimodal: true })], tl())).rows[0].reason).toBe('helper_ineligible');
    expect(plan(input([txtOwner({ multimodal: true }), txtHelper({ multimodal: true })], tl())).rows[0].outcome).toBe(
      'granted',
    );
  });

  it('helper_ineligible: the helper config is gone from its node, or sits on another lane', () => {
    expect(plan(input([txtOwner(), node('h', [])], tl())).rows[0].reason).toBe('helper_ineligible');
    expect(plan(input([txtOwner(), node('h', [fast('b', { contextsize: 4096 })])], tl())).rows[0].reason).toBe(
      'helper_ineligible',
    );
  });

  it('owner_ineligible: a linked owner whose config became ineligible is skipped at the next plan', () => {
    const r = plan(input([txtOwner({ eligible: false }), txtHelper()], tl()));
    expect(r.rows[0]).toMatchObject({ outcome: 'skipped', reason: 'owner_ineligible' });
    expect(r.noLease).toHaveLength(1);
  });
});

describe('outranked (several helpers pay off)', () => {
  const nodes = (held = 8) => [
    node('o', [owner('a', held)]),
    node('h1', [fast('b', { fit: per(9000) })]),
    node('h2', [fast('b', { fit: per(6000) })]),
    node('h3', [fast('b', { loaded: false, loadMs: 5000, fit: per(2000) })], { lanes: { image: null } }),
    node('h4', [fast('b', { fit: per(6000) })]),
  ];
  const links = [
    link('L1', 'o/a', 'h1/b'),
    link('L2', 'o/a', 'h2/b'),
    link('L3', 'o/a', 'h3/b'),
    link('L4', 'o/a', 'h4/b'),
  ];

  it("the helper with which the backlog drains soonest wins, load included: a deep backlog amortises h3's load", () => {
    // 8 held + 2 at the engine, 10 s each (100 s alone): with h3 (5 s load, then 2 s a job) it drains in ~21 s,
    // with h2 or h4 (6 s a job, loaded) in ~38 s. The faster helper that must load is leased first.
    const r = plan(input(nodes(), links));
    expect(reasons(r.rows)).toEqual([
      'a->h1/b:skipped:outranked',
      'a->h2/b:skipped:outranked',
      'a->h3/b:granted:-',
      'a->h4/b:skipped:outranked',
    ]);
    expect(r.leases).toHaveLength(1);
    expect(r.leases[0]).toMatchObject({ helper: { nodeId: 'h3', model: 'b' }, helperSwitchMs: 5000 });
  });

  it('when the backlog drains as soon with either, the earliest first job back wins; the rest are outranked, in a deterministic order', () => {
    // 2 held + 2 at the engine: the 20 s the owner's engine jobs take bound every helper; h2 and h4 hand back in
    // 6 s, h3 in 7 s; h2 beats h4 on the node name.
    const r = plan(input(nodes(2), links));
    expect(reasons(r.rows)).toEqual([
      'a->h1/b:skipped:outranked',
      'a->h2/b:granted:-',
      'a->h3/b:skipped:outranked',
      'a->h4/b:skipped:outranked',
    ]);
    expect(r.leases).toHaveLength(1);
    expect(r.leases[0]).toMatchObject({ helper: { nodeId: 'h2', model: 'b' }, slots: 2 });
    const reversed = plan(input(nodes(2).reverse(), [...links].reverse()));
    expect(reversed.rows).toEqual(r.rows);
  });
});

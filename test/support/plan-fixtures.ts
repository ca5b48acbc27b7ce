import type { CostFit, LinkSpec, ModelState, NodeState, PlanInput, PlanSettings } from '../../src-router/lending/types';

/** Snapshot builders for the pure planner's tests. */
export const NOW = 1_000_000;
export const SETTINGS: PlanSettings = { probeIdleMs: 5000, switchProbeFactor: 12, leaseTtlMs: 30_000 };

/** A fit of `ms` per job whatever the work. */
export const per = (ms: number): CostFit => ({ kind: 'scaled', interceptMs: ms, slopeMsPerWork: 0, samples: 5 });

export const model = (name: string, o: Partial<ModelState> = {}): ModelState => ({
  model: name,
  lane: 'image',
  loaded: true,
  held: 0,
  heldWork: [],
  active: 0,
  lentOut: 0,
  fit: null,
  loadMs: null,
  contextsize: null,
  eligible: true,
  multimodal: false,
  meanHeldTokens: null,
  ...o,
});

export const node = (nodeId: string, models: ModelState[], o: Partial<NodeState> = {}): NodeState => ({
  nodeId,
  reachable: true,
  acceptsBorrowed: true,
  ownIdleMs: 0,
  sinceOwnRequestMs: null,
  lanes: Object.fromEntries(models.filter((m) => m.loaded).map((m) => [m.runtimeLane ?? m.lane, m.model])),
  borrowedInFlight: 0,
  models,
  ...o,
});

/** `link('l1', 'o/a', 'h/b')`: owner a on node o lends to helper b on node h. */
export const link = (id: string, owner: string, helper: string, o: Partial<LinkSpec> = {}): LinkSpec => {
  const [on, om] = owner.split('/');
  const [hn, hm] = helper.split('/');
  return {
    id,
    lane: 'image',
    owner: { nodeId: on, model: om },
    helper: { nodeId: hn, model: hm },
    loadIfUnloaded: true,
    restoreAfterBorrow: false,
    ...o,
  };
};

export const planInput = (nodes: NodeState[], links: LinkSpec[], o: Partial<PlanInput> = {}): PlanInput => ({
  now: NOW,
  trigger: 'enqueued',
  links,
  nodes,
  live: [],
  settings: SETTINGS,
  ...o,
});

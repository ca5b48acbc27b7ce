/** Look-ups into a plan snapshot (pure). */
import { type LiveLease, type ModelRef, type ModelState, type NodeState, type PlanInput, refKey } from './types';

// Indexes built once per snapshot (the snapshot is never mutated while planning), so look-ups stay O(1)
// however many nodes and links a cluster has (see the planner-scale benchmark).
const nodeIndex = new WeakMap<readonly NodeState[], Map<string, NodeState>>();
const modelIndex = new WeakMap<NodeState, Map<string, ModelState>>();

export function findNode(input: PlanInput, nodeId: string): NodeState | undefined {
  let index = nodeIndex.get(input.nodes);
  if (!index) nodeIndex.set(input.nodes, (index = new Map(input.nodes.map((n) => [n.nodeId, n]))));
  return index.get(nodeId);
}

export function findModel(node: NodeState | undefined, model: string): ModelState | undefined {
  if (!node) return undefined;
  let index = modelIndex.get(node);
  if (!index) modelIndex.set(node, (index = new Map(node.models.map((m) => [m.model, m]))));
  return index.get(model);
}

/** The key of the runtime lane a model loads into on its node (`runtimeLane`, else its lending lane). */
export function runtimeLaneOf(m: ModelState): string {
  return m.runtimeLane ?? m.lane;
}

/**
 * What a helper claim locks: one runtime lane of one node. Interpretation ("a lease naming the helper";
 * LeaseGrant has one owner per helper runtime): two owners lending into the same runtime of one node would
 * evict each other's model, so a claim covers the whole lane, not only the linked model. A model missing from
 * the snapshot claims just its own reference.
 */
export function claimKey(input: PlanInput, helper: ModelRef): string {
  const m = findModel(findNode(input, helper.nodeId), helper.model);
  return m ? `${helper.nodeId}#${runtimeLaneOf(m)}` : refKey(helper);
}

/** An owner seen with no held work: it has nothing left to lend, so its lease claims no helper any more. */
function drained(input: PlanInput, owner: ModelRef): boolean {
  const node = findNode(input, owner.nodeId);
  const state = findModel(node, owner.model);
  return !!node && node.reachable && !!state && state.held <= 0;
}

/** Live leases (not expired at `now`) keyed by the claim they hold, with the owner holding each; drained owners' excluded. */
export function liveClaims(input: PlanInput): Map<string, LiveLease[]> {
  const out = new Map<string, LiveLease[]>();
  for (const l of input.live) {
    if (l.expiresAt <= input.now || drained(input, l.owner)) continue;
    const k = claimKey(input, l.helper);
    out.set(k, [...(out.get(k) ?? []), l]);
  }
  return out;
}

/** Owners of live leases whose held work is gone: their leases end now, so their helpers are free for others. */
export function drainedLeaseHolders(input: PlanInput): ModelRef[] {
  const out = new Map<string, ModelRef>();
  for (const l of input.live) if (l.expiresAt > input.now && drained(input, l.owner)) out.set(refKey(l.owner), l.owner);
  return [...out.values()];
}

/** Owner models with held work, in planning order: most held first, then by node/model for determinism. */
export function ownersWithHeldWork(input: PlanInput): { ref: ModelRef; node: NodeState; state: ModelState }[] {
  const seen = new Map<string, { ref: ModelRef; node: NodeState; state: ModelState }>();
  for (const link of input.links) {
    const key = refKey(link.owner);
    if (seen.has(key)) continue;
    const node = findNode(input, link.owner.nodeId);
    const state = findModel(node, link.owner.model);
    // An owner we cannot see has no known held work to lend: it gets no rows and no answer.
    if (!node || !node.reachable || !state || state.held <= 0) continue;
    seen.set(key, { ref: link.owner, node, state });
  }
  return [...seen.values()].sort((a, b) => b.state.held - a.state.held || cmp(refKey(a.ref), refKey(b.ref)));
}

export const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

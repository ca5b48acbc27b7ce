/**
 * The lease planner (LEASE-4, LEASE-9, PRICE-1..7, PROBE-1..4, LOG-2, LLM-1/2): a pure function of a snapshot
 * and a clock reading. For each owner with held work it evaluates every helper its links name and writes one
 * plan row per owner–helper pair; it answers each owner with one lease or no lease.
 */
import { predict } from '../costs/fit';
import { leaseSlots, ownerDrainMs, type PairPrice, paysOff, pricePair, recentlyBusy, sharedDrainMs } from './pricing';
import { compareProbeCandidates, type ProbeTiming, probeTiming } from './probes';
import { claimKey, cmp, drainedLeaseHolders, findModel, findNode, liveClaims, ownersWithHeldWork } from './snapshot';
import {
  type LeaseGrant,
  type LinkSpec,
  type LiveLease,
  type ModelRef,
  type ModelState,
  type NodeState,
  type PlanInput,
  type PlanResult,
  type PlanRow,
  refKey,
  type SkipReason,
} from './types';

interface PairEval {
  link: LinkSpec;
  helperKey: string;
  claim: string;
  node: NodeState | undefined;
  helper: ModelState | undefined;
  price: PairPrice | null;
  /** A reason that rules out both a lease and a probe. */
  gate: SkipReason | null;
  /** Why the cost rule does not choose the helper (a probe may still go). */
  cost: SkipReason | null;
  probe: ProbeTiming | null;
  /** The owner's backlog drained with this helper's help (sharedDrainMs), null when unpriced. */
  drain: number | null;
}

interface Owner {
  ref: ModelRef;
  node: NodeState;
  state: ModelState;
}

/**
 * Gates that rule out lending altogether, lease or probe. PROBE-2 lets a probe go only "as long as it is
 * accepting borrowed work, its link allows it to take the work, and, for text, its context window holds the
 * work"; an unreachable, ineligible or claimed helper cannot take any lease either.
 */
function gateReason(
  owner: Owner,
  link: LinkSpec,
  node: NodeState | undefined,
  helper: ModelState | undefined,
  p: PairPrice | null,
  claimed: boolean,
): SkipReason | null {
  if (!owner.state.eligible) return 'owner_ineligible';
  if (!node || !node.reachable) return 'helper_unreachable';
  // A helper model that vanished from its node's snapshot (config removed) cannot serve: ineligible.
  if (!helper || !p || !helper.eligible || helper.lane !== link.lane) return 'helper_ineligible';
  // LLM-1: "A multimodal model links only with another multimodal model" (either direction), and a text
  // helper must state a context window.
  if (link.lane === 'text' && (owner.state.multimodal !== helper.multimodal || helper.contextsize === null))
    return 'helper_ineligible';
  if (!node.acceptsBorrowed) return 'helper_not_accepting';
  if (claimed) return 'helper_claimed';
  if (p.mustSwitch && !link.loadIfUnloaded) return 'load_forbidden';
  // LLM-2: the window must hold the mean estimated size of the owner's queued requests. Before the owner has a
  // token profile the node sends a safe upper bound instead (body bytes + the answer's room), so a helper whose
  // window surely holds the work is probed even then (PROBE-2: "even when ... neither side is priced yet").
  if (
    link.lane === 'text' &&
    (owner.state.meanHeldTokens === null || owner.state.meanHeldTokens > (helper.contextsize ?? 0))
  )
    return 'context_too_small';
  return null;
}

/** The cost rule (PRICE-1..7); null when the helper pays off. */
function costReason(owner: ModelState, node: NodeState, p: PairPrice): SkipReason | null {
  if (!owner.fit) return 'owner_unpriced';
  if (p.helperSwitchMs === null) return 'switch_unpriced';
  if (p.helperRestoreMs === null) return 'restore_unpriced';
  if (p.helperServiceMs === null) return 'service_unpriced';
  // The owner has a fit, but it cannot price its whole backlog (constant fit, other sizes): drain unknown.
  if (p.ownerDrainMs === null) return 'owner_unpriced';
  if (recentlyBusy(node.sinceOwnRequestMs, p)) return 'helper_recently_busy';
  return paysOff(p) ? null : 'cost_rejected';
}

/**
 * A live lease yields its helper to an owner whose backlog would take more than this many times as long to drain
 * alone as the holder's: a helper stays with the owner that gains most from it, and the margin keeps two owners of
 * similar need from passing it back and forth (each move refuses the lent requests still on their way).
 */
export const YIELD_FACTOR = 2;

/**
 * Claims: another owner's live lease on the helper's runtime lane, or a lease granted to another owner earlier
 * in this plan. Interpretation: a live lease counts until the coordinator replaces it with a later answer, even
 * if this same plan gives its owner no lease; the helper is free at the next decision. A live lease of an owner
 * whose drain is priced yields to an owner whose drain is more than YIELD_FACTOR times longer.
 */
function isClaimed(
  input: PlanInput,
  owner: Owner,
  claim: string,
  live: Map<string, LiveLease[]>,
  planned: Map<string, string>,
): boolean {
  const ownKey = refKey(owner.ref);
  const byPlan = planned.get(claim);
  if (byPlan !== undefined && byPlan !== ownKey) return true;
  const mine = ownerDrainMs(owner.state);
  return (live.get(claim) ?? []).some((l) => {
    if (refKey(l.owner) === ownKey) return false;
    const holder = findModel(findNode(input, l.owner.nodeId), l.owner.model);
    const theirs = holder ? ownerDrainMs(holder) : null;
    return mine === null || theirs === null || mine <= YIELD_FACTOR * theirs;
  });
}

/**
 * Planning order: the owner whose backlog takes longest to drain alone plans first (it gains most from a helper
 * two owners contend for); owners whose drain is unpriced after them, each group in the snapshot's order (most held first).
 */
function byNeed(owners: Owner[]): Owner[] {
  const drain = new Map(owners.map((o) => [o, ownerDrainMs(o.state)]));
  return [...owners].sort((a, b) => {
    const da = drain.get(a) ?? null;
    const db = drain.get(b) ?? null;
    if (da === null || db === null) return da === db ? 0 : da === null ? 1 : -1;
    return db - da;
  });
}

function evaluate(
  input: PlanInput,
  owner: Owner,
  link: LinkSpec,
  live: Map<string, LiveLease[]>,
  planned: Map<string, string>,
): PairEval {
  const node = findNode(input, link.helper.nodeId);
  const helper = findModel(node, link.helper.model);
  const price = node && helper ? pricePair(owner.state, node, helper) : null;
  const claim = claimKey(input, link.helper);
  const gate = gateReason(owner, link, node, helper, price, isClaimed(input, owner, claim, live, planned));
  const cost = node && price ? costReason(owner.state, node, price) : null;
  const probe = node && price ? probeTiming(input.now, node.ownIdleMs, input.settings, price.mustSwitch) : null;
  return {
    link,
    helperKey: refKey(link.helper),
    claim,
    node,
    helper,
    price,
    gate,
    cost,
    probe,
    drain: price ? sharedDrainMs(owner.state, price) : null,
  };
}

/**
 * When several helpers pay off, the best wins: the one with which the owner's backlog drains soonest, then the
 * earliest first job back, then fastest per job, then by name.
 */
function comparePayers(a: PairEval, b: PairEval): number {
  const da = a.drain ?? Infinity;
  const db = b.drain ?? Infinity;
  if (da !== db) return da - db;
  const ca = a.price?.helperCostMs ?? Infinity;
  const cb = b.price?.helperCostMs ?? Infinity;
  if (ca !== cb) return ca - cb;
  const sa = a.price?.helperServiceMs ?? Infinity;
  const sb = b.price?.helperServiceMs ?? Infinity;
  if (sa !== sb) return sa - sb;
  return cmp(a.helperKey, b.helperKey) || cmp(a.link.id, b.link.id);
}

/** Links grouped by owner once per snapshot, sorted by ID (so a plan stays linear in links). */
const linksByOwner = new WeakMap<readonly LinkSpec[], Map<string, LinkSpec[]>>();

/** One link per owner–helper pair (LOG-2: one row per pair), the lowest link ID winning a duplicate. */
function linksOf(input: PlanInput, owner: ModelRef): LinkSpec[] {
  let grouped = linksByOwner.get(input.links);
  if (!grouped) {
    grouped = new Map();
    for (const l of [...input.links].sort((a, b) => cmp(a.id, b.id))) {
      const k = refKey(l.owner);
      grouped.set(k, [...(grouped.get(k) ?? []), l]);
    }
    linksByOwner.set(input.links, grouped);
  }
  const byHelper = new Map<string, LinkSpec>();
  const ownerKey = refKey(owner);
  for (const l of grouped.get(ownerKey) ?? []) {
    if (refKey(l.helper) === ownerKey) continue;
    if (!byHelper.has(refKey(l.helper))) byHelper.set(refKey(l.helper), l);
  }
  return [...byHelper.values()].sort((a, b) => cmp(refKey(a.helper), refKey(b.helper)) || cmp(a.id, b.id));
}

function row(
  input: PlanInput,
  owner: Owner,
  e: PairEval,
  outcome: PlanRow['outcome'],
  reason: SkipReason | null,
  slots: number,
  probeDueAt: number | null,
): PlanRow {
  const p = e.price;
  // The owner's side is known even when the helper is not (LOG-2: every variable filled when known).
  const drain = p ? p.ownerDrainMs : ownerDrainMs(owner.state);
  const ownerJob = p
    ? p.ownerJobMs
    : owner.state.heldWork.length
      ? predict(owner.state.fit, owner.state.heldWork[0])
      : null;
  return {
    at: input.now,
    trigger: input.trigger,
    linkId: e.link.id,
    owner: owner.ref,
    helper: e.link.helper,
    held: owner.state.held,
    backlog: owner.state.held + (owner.state.pinnedWork?.length ?? 0) + Math.max(0, owner.state.active),
    ownerDrainMs: drain,
    helperSwitchMs: p?.helperSwitchMs ?? null,
    helperServiceMs: p?.helperServiceMs ?? null,
    serviceSource: p?.serviceSource ?? null,
    helperBusyMs: p?.helperBusyMs ?? null,
    helperIdleMs: e.node?.ownIdleMs ?? 0,
    ownerJobMs: ownerJob,
    helperRestoreMs: p?.helperRestoreMs ?? null,
    probeDueAt,
    outcome,
    reason,
    slots,
  };
}

function grant(input: PlanInput, owner: Owner, e: PairEval, probe: boolean): LeaseGrant {
  const p = e.price;
  const ownerJobMs = p?.ownerJobMs ?? null;
  const helperJobMs = p?.helperServiceMs ?? null;
  return {
    linkId: e.link.id,
    owner: owner.ref,
    helper: e.link.helper,
    slots: probe ? 1 : leaseSlots(helperJobMs, ownerJobMs),
    ttlMs: input.settings.leaseTtlMs,
    probe,
    ownerJobMs,
    helperJobMs,
    helperSwitchMs: p?.helperSwitchMs ?? null,
    measured:
      !probe &&
      owner.state.fit !== null &&
      p?.serviceSource === 'helper' &&
      ownerJobMs !== null &&
      helperJobMs !== null,
    helperContextsize: e.link.lane === 'text' ? (e.helper?.contextsize ?? null) : null,
    helperMultimodal: e.helper?.multimodal ?? false,
  };
}

interface OwnerPlan {
  rows: PlanRow[];
  lease: LeaseGrant | null;
  claim: string | null;
  wakeAt: number | null;
}

function planOwner(
  input: PlanInput,
  owner: Owner,
  live: Map<string, LiveLease[]>,
  planned: Map<string, string>,
): OwnerPlan {
  const evals = linksOf(input, owner.ref).map((l) => evaluate(input, owner, l, live, planned));
  const payers = evals.filter((e) => e.gate === null && e.cost === null).sort(comparePayers);
  let winner: PairEval | null = payers[0] ?? null;
  let probe = false;
  let losers = new Set<PairEval>(payers.slice(1));
  if (!winner) {
    // PROBE-1/2: the cost rule chose nobody; a helper that passes the gates and has idled long enough gets a
    // one-request probe, whatever the prices say ("even when the owner is faster or neither side is priced").
    const due = evals
      .filter((e) => e.gate === null && e.probe?.due)
      .sort((a, b) =>
        compareProbeCandidates(
          {
            helperKey: a.helperKey,
            linkId: a.link.id,
            mustSwitch: a.price?.mustSwitch ?? false,
            idleMs: a.node?.ownIdleMs ?? 0,
          },
          {
            helperKey: b.helperKey,
            linkId: b.link.id,
            mustSwitch: b.price?.mustSwitch ?? false,
            idleMs: b.node?.ownIdleMs ?? 0,
          },
        ),
      );
    winner = due[0] ?? null;
    probe = winner !== null;
    // Interpretation: a helper due for a probe that loses the owner's one lease to another probe is `outranked`.
    losers = new Set(due.slice(1));
  }
  const lease = winner ? grant(input, owner, winner, probe) : null;
  let wakeAt: number | null = null;
  const rows = evals.map((e) => {
    if (e === winner && lease)
      return row(input, owner, e, probe ? 'probe' : 'granted', probe ? e.cost : null, lease.slots, null);
    if (losers.has(e)) return row(input, owner, e, 'skipped', 'outranked', 0, null);
    if (e.gate !== null) return row(input, owner, e, 'skipped', e.gate, 0, null);
    // PROBE-4: the owner got no lease and this probe waits only for the helper's idleness.
    const dueAt = !lease && e.probe && !e.probe.due ? e.probe.dueAt : null;
    if (dueAt !== null) wakeAt = wakeAt === null ? dueAt : Math.min(wakeAt, dueAt);
    return row(input, owner, e, 'skipped', e.cost, 0, dueAt);
  });
  return { rows, lease, claim: winner ? winner.claim : null, wakeAt };
}

export function plan(input: PlanInput): PlanResult {
  const live = liveClaims(input);
  const planned = new Map<string, string>();
  const result: PlanResult = { leases: [], noLease: [], rows: [], wakeAt: null };
  for (const owner of byNeed(ownersWithHeldWork(input))) {
    const p = planOwner(input, owner, live, planned);
    result.rows.push(...p.rows);
    if (p.lease && p.claim !== null) {
      result.leases.push(p.lease);
      planned.set(p.claim, refKey(owner.ref));
    } else {
      result.noLease.push(owner.ref);
    }
    if (p.wakeAt !== null) result.wakeAt = result.wakeAt === null ? p.wakeAt : Math.min(result.wakeAt, p.wakeAt);
  }
  // An owner whose lendable backlog is empty gives its lease (and the helper's claim) back at once, not at its TTL.
  result.noLease.push(...drainedLeaseHolders(input));
  return result;
}

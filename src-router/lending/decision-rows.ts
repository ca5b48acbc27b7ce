/**
 * Decision-log rows from lending values (LOG-2..4), one typed constructor per event so the plumbing cannot forget a
 * column, and folding for the Lending tab (UI-1). Pure: the writer (store/decision-log.ts) stamps node and version.
 */

import { type Folded, foldDecisionRows } from '../contract/decision-fold';
import type { DecisionDetails, DecisionInput, DecisionRow } from '../store/decision-log-row';
import type { ModelRef, PlanRow } from './types';

/** LEASE-8: why the master could not pass a lent request on. */
export type RelayRefusedReason = 'no_live_lease' | 'helper_unreachable' | 'forward_failed';
/** LOG-4 / HELPER-1/3: why a helper handed a borrowed request back (409 offload_returned). */
export type BorrowedReturnedReason =
  | 'busy_on_arrival'
  | 'own_work_arrived'
  | 'no_link'
  | 'load_forbidden'
  | 'withdrawn';
/** Every reason a lent request can come back for, as the owner logs it. */
export const RETURNED_REASONS = [
  'busy_on_arrival',
  'own_work_arrived',
  'no_link',
  'load_forbidden',
  'withdrawn',
  'no_live_lease',
  'helper_unreachable',
  'forward_failed',
  'cut_off',
  'helper_stalled',
] as const;
/** GUARD-2: why a guardian answered an image request for a text-only model. */
export type GuardianRoutedReason = 'detected' | 'engine_refused';
/**
 * How a lent request whose fate was unknown (its forward broke off after it may have reached the helper) was
 * resolved at the helper before anyone ran it again: `withdrawn` (it never starts there: the owner runs it),
 * `answered` (its answer was fetched from the helper), `failed` (it failed there: the owner runs it), `helper_gone`
 * (the helper's port refuses the owner's connections too: its work is gone with it, the owner runs it), `unresolved`
 * (the master could not ask the helper, or only the master is refused: the owner asks it itself), `taken_back`
 * (neither could: the owner runs it, and tells the helper to drop it once it answers again), `lost` (the helper started
 * it but no longer knows it, or its answer did not come in time: a clear error, not run again). After a take-back, the
 * helper's word: `dropped` (it never started there) or `started_twice` (it ran there too).
 */
export type LentFateReason =
  | 'withdrawn'
  | 'answered'
  | 'failed'
  | 'helper_gone'
  | 'unresolved'
  | 'taken_back'
  | 'lost'
  | 'dropped'
  | 'started_twice';
/** Why an owner dropped its lease. */
export type LeaseClearedReason = 'no_lease' | 'ttl_expired';
/** Why a lent request came back to its owner: the helper's 409 reason, the master's refusal, or a cut-off (HOLD-4/HELPER-5). */
export type ReturnedReason = (typeof RETURNED_REASONS)[number];

const BLANK: Omit<DecisionInput, 'at' | 'kind' | 'event'> = {
  trigger: null,
  linkId: null,
  ownerNode: null,
  ownerModel: null,
  helperNode: null,
  helperModel: null,
  held: null,
  backlog: null,
  ownerDrainMs: null,
  helperSwitchMs: null,
  helperServiceMs: null,
  serviceSource: null,
  helperIdleMs: null,
  outcome: null,
  reason: null,
  slots: null,
  requestsOut: null,
  ownerPredictedFinishMs: null,
  ownerJobMs: null,
  helperJobMs: null,
  waitedMs: null,
  borrowedInBackend: null,
  requestId: null,
  details: null,
};

const owner = (r: ModelRef | null) => ({ ownerNode: r?.nodeId ?? null, ownerModel: r?.model ?? null });
const helper = (r: ModelRef | null) => ({ helperNode: r?.nodeId ?? null, helperModel: r?.model ?? null });
const details = (d: DecisionDetails | undefined): DecisionDetails | null => (d && Object.keys(d).length ? d : null);

/** LOG-2: one plan row (master). The PlanRow fields without a column of their own go to `details`. */
export function planRowToDecision(row: PlanRow): DecisionInput {
  return {
    ...BLANK,
    at: row.at,
    kind: 'plan',
    event: row.outcome,
    trigger: row.trigger,
    linkId: row.linkId,
    ...owner(row.owner),
    ...helper(row.helper),
    held: row.held,
    backlog: row.backlog,
    ownerDrainMs: row.ownerDrainMs,
    helperSwitchMs: row.helperSwitchMs,
    helperServiceMs: row.helperServiceMs,
    serviceSource: row.serviceSource,
    helperIdleMs: row.helperIdleMs,
    outcome: row.outcome,
    reason: row.reason,
    slots: row.slots,
    ownerJobMs: row.ownerJobMs,
    details: details({
      ...(row.helperRestoreMs !== null ? { helperRestoreMs: row.helperRestoreMs } : {}),
      ...(row.helperBusyMs ? { helperBusyMs: row.helperBusyMs } : {}),
      ...(row.probeDueAt !== null ? { probeDueAt: row.probeDueAt } : {}),
    }),
  };
}

interface OwnerLeaseArgs {
  at: number;
  linkId: string | null;
  owner: ModelRef;
  helper: ModelRef | null;
  slots: number | null;
  /** Requests of this owner out to helpers at that moment. */
  requestsOut: number;
  details?: DecisionDetails;
}

/** LOG-3 (owner): a new or changed lease. */
export function leaseUpdatedRow(
  a: OwnerLeaseArgs & {
    helper: ModelRef;
    linkId: string;
    slots: number;
    probe: boolean;
    ttlMs: number;
    ownerJobMs: number | null;
    helperJobMs: number | null;
  },
): DecisionInput {
  return dispatchRow('lease_updated', a, {
    ownerJobMs: a.ownerJobMs,
    helperJobMs: a.helperJobMs,
    details: { probe: a.probe, ttlMs: a.ttlMs, ...a.details },
  });
}

/** LOG-3 (owner): the lease ended (the master answered none, or it expired on the owner's clock). */
export function leaseClearedRow(a: OwnerLeaseArgs & { reason: LeaseClearedReason }): DecisionInput {
  return dispatchRow('lease_cleared', a, { reason: a.reason });
}

/** LOG-3 (owner): a lease for a model this node does not lend (with how many of its requests were out: LOG-3 asks it of every dispatch row). */
export function leaseRefusedRow(a: OwnerLeaseArgs & { reason: 'not_an_owner' }): DecisionInput {
  return dispatchRow('lease_refused', a, { reason: a.reason });
}

/** LOG-3 (owner): a held request went to the helper. */
export function lentRow(a: OwnerLeaseArgs & { helper: ModelRef; requestId: string }): DecisionInput {
  return dispatchRow('lent', a, { requestId: a.requestId });
}

/** LOG-3 (owner): a lent request came back; a return is not a failure (HELPER-1). */
export function returnedRow(a: OwnerLeaseArgs & { requestId: string; reason: ReturnedReason }): DecisionInput {
  return dispatchRow('returned', a, { requestId: a.requestId, reason: a.reason });
}

/** LOG-3 (owner): a request kept waiting for a faster helper (HOLD-1..4). */
export function heldForHelperRow(
  a: OwnerLeaseArgs & {
    helper: ModelRef;
    requestId: string;
    /** When the owner would finish this request, in ms from `at`. */
    ownerPredictedFinishMs: number;
    ownerJobMs: number;
    helperJobMs: number;
    /** How long the request has waited so far. */
    waitedMs: number;
  },
): DecisionInput {
  return dispatchRow('held_for_helper', a, {
    requestId: a.requestId,
    ownerPredictedFinishMs: a.ownerPredictedFinishMs,
    ownerJobMs: a.ownerJobMs,
    helperJobMs: a.helperJobMs,
    waitedMs: a.waitedMs,
  });
}

/** LOG-3 (master): a lent request the master could not pass on (LEASE-8). */
export function relayRefusedRow(a: {
  at: number;
  linkId: string | null;
  owner: ModelRef;
  helper: ModelRef | null;
  requestId: string;
  reason: RelayRefusedReason;
  details?: DecisionDetails;
}): DecisionInput {
  return {
    ...BLANK,
    at: a.at,
    kind: 'dispatch',
    event: 'relay_refused',
    linkId: a.linkId,
    ...owner(a.owner),
    ...helper(a.helper),
    requestId: a.requestId,
    reason: a.reason,
    details: details(a.details),
  };
}

/** A lent request's unknown fate, resolved at its helper by the master or the owner, whichever resolved it. */
export function lentFateRow(a: {
  at: number;
  linkId: string | null;
  owner: ModelRef;
  helper: ModelRef;
  requestId: string;
  reason: LentFateReason;
  details?: DecisionDetails;
}): DecisionInput {
  return {
    ...BLANK,
    at: a.at,
    kind: 'dispatch',
    event: 'lent_fate',
    linkId: a.linkId,
    ...owner(a.owner),
    ...helper(a.helper),
    requestId: a.requestId,
    reason: a.reason,
    details: details(a.details),
  };
}

/** LOG-4 (helper): the node's own request waited behind borrowed jobs already in its backend. `model`: its own model. */
export function nativeWaitedBehindBorrowedRow(a: {
  at: number;
  model: ModelRef;
  requestId: string | null;
  borrowedInBackend: number;
  waitedMs: number;
  details?: DecisionDetails;
}): DecisionInput {
  return {
    ...BLANK,
    at: a.at,
    kind: 'helper',
    event: 'native_waited_behind_borrowed',
    ...helper(a.model),
    requestId: a.requestId,
    borrowedInBackend: a.borrowedInBackend,
    waitedMs: a.waitedMs,
    details: details(a.details),
  };
}

/** LOG-4 (helper): a borrowed request handed back with 409 offload_returned. `owner` null when several went back at once (count in details). */
export function borrowedReturnedRow(a: {
  at: number;
  linkId: string | null;
  owner: ModelRef | null;
  helper: ModelRef;
  requestId: string | null;
  reason: BorrowedReturnedReason;
  borrowedInBackend: number | null;
  details?: DecisionDetails;
}): DecisionInput {
  return {
    ...BLANK,
    at: a.at,
    kind: 'helper',
    event: 'borrowed_returned',
    linkId: a.linkId,
    ...owner(a.owner),
    ...helper(a.helper),
    requestId: a.requestId,
    reason: a.reason,
    borrowedInBackend: a.borrowedInBackend,
    details: details(a.details),
  };
}

function dispatchRow(
  event: DecisionInput['event'],
  a: Omit<OwnerLeaseArgs, 'requestsOut'> & { requestsOut: number | null },
  extra: Partial<DecisionInput>,
): DecisionInput {
  const base: DecisionInput = {
    ...BLANK,
    at: a.at,
    kind: 'dispatch',
    event,
    linkId: a.linkId,
    ...owner(a.owner),
    ...helper(a.helper),
    slots: a.slots,
    requestsOut: a.requestsOut,
  };
  return { ...base, ...extra, details: details(extra.details ?? a.details) };
}

/**
 * GUARD-2 (the node that routed it): an image request addressed to a text-only model goes to its guardian — detected
 * in the request, or refused by the model's engine. Owner columns name the text-only model, helper columns the
 * guardian; `details.from` is the setting in force (model, node or cluster).
 */
export function guardianRoutedRow(a: {
  at: number;
  model: ModelRef;
  guardian: ModelRef;
  requestId: string | null;
  reason: GuardianRoutedReason;
  from: string;
  engineStatus?: number;
}): DecisionInput {
  return {
    ...BLANK,
    at: a.at,
    kind: 'dispatch',
    event: 'guardian_routed',
    ...owner(a.model),
    ...helper(a.guardian),
    reason: a.reason,
    requestId: a.requestId,
    details: details({ from: a.from, ...(a.engineStatus !== undefined ? { engineStatus: a.engineStatus } : {}) }),
  };
}

/** Consecutive repeats of one decision shown as one line of the Lending tab (UI-1): the shared fold of the contract. */
export type FoldedRow = Folded<DecisionRow>;

export const foldRows = (rows: readonly DecisionRow[], opts: { adjacentOnly?: boolean } = {}): FoldedRow[] =>
  foldDecisionRows(rows, opts);

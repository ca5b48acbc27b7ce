import type { DecisionInput } from '../store/decision-log-row';
import type { LeaseGrant, ModelRef, NodeState, Trigger } from './types';

/** A lent request on its way owner → master → helper (LEASE-5); only non-streaming bodies are lent (LLM-4). */
export interface RelayRequest {
  requestId: string;
  owner: ModelRef;
  helper: ModelRef;
  endpoint: 'chat' | 'completion' | 'embedding' | 'image';
  json: Record<string, unknown>;
}

/** The helper's answer as the owner gets it back, or why it did not run there. */
export type RelayAnswer =
  /**
   * `queueMs`: how long it waited at the helper (its router queue and lane) before its engine took it, when the
   * helper said. Between nodes it travels as the `x-routerdesk-queue-ms` header, never in the body: an
   * older owner's strict parse of the body must not see it.
   */
  | { kind: 'answered'; status: number; body: unknown; queueMs?: number }
  /** 409 offload_returned from the helper (HELPER-1/3): not a failure; the owner re-queues it. */
  | { kind: 'returned'; reason: string }
  /** The master could not pass it on (LEASE-8): no_live_lease, helper_unreachable, forward_failed. */
  | { kind: 'refused'; reason: 'no_live_lease' | 'helper_unreachable' | 'forward_failed'; message: string }
  /** The way to the master broke after the request was sent: whether the helper runs it is not known. */
  | { kind: 'unknown'; message: string };

/** How an owner reaches the decider: in-process on the master, over HTTP on a slave. */
export interface MasterPort {
  /**
   * Reports a queue event of an owner model; answers with its lease, or null for no lease (LEASE-2, LEASE-4).
   * `state`: the owner's lending state as it is when the report goes out; a remote master takes it with the event
   * instead of polling the owner back, the in-process one reads it itself.
   */
  event(owner: ModelRef, trigger: Trigger, state?: () => NodeState): Promise<LeaseGrant | null>;
  relay(req: RelayRequest, signal: AbortSignal): Promise<RelayAnswer>;
  /**
   * HOLD-4: cut a lent request off if its helper has not started it; true when it was cut (it comes back as
   * returned). Only the helper's definite answer cuts: one that cannot be asked counts as started.
   */
  cutOff(requestId: string): Promise<boolean>;
  /** The owner's client left while the request was lent: the helper stops it (it does not end with its relay). */
  cancel(requestId: string): Promise<void>;
}

/**
 * The helper's answer for one lent request the master withdraws (HOLD-4 cut-off, HELPER-5 stall return), given in
 * one step the helper cannot race: `withdrawn` — it had not started it and never will (a late arrival is refused);
 * `started` — it holds the runtime and finishes it.
 */
export type WithdrawResult = 'withdrawn' | 'started';

/** Where decisions are written (the batched decision log). Every row is built by its typed builder (decision-rows.ts). */
export interface DecisionSink {
  add(row: DecisionInput): void;
}

/** What a helper says of a borrowed request's answer (an owner whose relay broke fetches it directly). */
export type BorrowedAnswer =
  | { state: 'answered'; status: number; body: unknown }
  | { state: 'failed' | 'running' | 'unknown' };

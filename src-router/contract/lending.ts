import { z } from 'zod';
import { leaseGrantSchema } from './decisions';

/**
 * Wire objects of lending's node API between peers (cluster token): the lending state a node answers the master's
 * poll with (LEASE-3), and the helper's answers to the stall check (HELPER-5) and to withdrawals (HOLD-4).
 * Parsed on arrival: a peer that answers anything else is treated as not answering.
 */

const costFitSchema = z.union([
  z
    .object({
      kind: z.literal('scaled'),
      interceptMs: z.number().nonnegative(),
      slopeMsPerWork: z.number().nonnegative(),
      samples: z.number().int().nonnegative(),
    })
    .strict(),
  z
    .object({
      kind: z.literal('constant'),
      work: z.number().nonnegative(),
      meanMs: z.number().nonnegative(),
      samples: z.number().int().nonnegative(),
    })
    .strict(),
]);

const count = z.number().int().nonnegative();

export const lendingModelStateSchema = z
  .object({
    model: z.string().min(1),
    lane: z.enum(['image', 'text']),
    loaded: z.boolean(),
    held: count,
    heldWork: z.array(z.number().nonnegative()),
    active: count,
    lentOut: count,
    borrowedWaiting: count.optional(),
    fit: costFitSchema.nullable(),
    loadMs: z.number().nonnegative().nullable(),
    contextsize: z.number().int().nullable(),
    eligible: z.boolean(),
    multimodal: z.boolean(),
    meanHeldTokens: z.number().nonnegative().nullable(),
    runtimeLane: z.string().optional(),
    pinnedWork: z.array(z.number().nonnegative()).optional(),
  })
  .strict();

export const lendingNodeStateSchema = z
  .object({
    nodeId: z.string().min(1),
    reachable: z.boolean(),
    acceptsBorrowed: z.boolean(),
    ownIdleMs: z.number().nonnegative(),
    sinceOwnRequestMs: z.number().nonnegative().nullable(),
    lanes: z.record(z.string(), z.string().nullable()),
    borrowedInFlight: count,
    models: z.array(lendingModelStateSchema),
  })
  .strict();

/** HELPER-5: how many borrowed jobs the helper runs or queues now. */
export const borrowedAnswerSchema = z.object({ running: count, started: z.boolean().optional() }).strict();

/** HOLD-4 / HELPER-5: the master withdraws lent requests at their helper. */
export const withdrawRequestSchema = z
  .object({ requestIds: z.array(z.string().min(1).max(200)).min(1).max(1000) })
  .strict();

/** Per request id: withdrawn (it never starts there) or started (it holds the runtime and finishes). */
export const withdrawAnswerSchema = z
  .object({ results: z.record(z.string(), z.enum(['withdrawn', 'started'])) })
  .strict();

/** LEASE-2/4: the master's answer to an owner's queue event. */
export const eventAnswerSchema = z.object({ lease: leaseGrantSchema.nullable() }).strict();

/** HOLD-4: the master's answer to an owner's cut-off request. */
export const cutAnswerSchema = z.object({ cut: z.boolean() }).strict();

/** LEASE-5/8: what the master's relay answers an owner (a lent request's answer, a hand-back or a refusal). */
export const relayAnswerSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('answered'), status: z.number().int().min(100).max(599), body: z.unknown() }).strict(),
  z.object({ kind: z.literal('returned'), reason: z.string().max(200) }).strict(),
  z
    .object({
      kind: z.literal('refused'),
      reason: z.enum(['no_live_lease', 'helper_unreachable', 'forward_failed']),
      message: z.string(),
    })
    .strict(),
  // The master could not tell whether the helper got it, nor ask the helper: the owner asks the helper itself.
  z.object({ kind: z.literal('unknown'), message: z.string().max(2000) }).strict(),
]);

/** An owner whose relay broke asks the helper for a borrowed request's answer (long-polled up to `wait` ms). */
export const borrowedAnswerStateSchema = z.discriminatedUnion('state', [
  z.object({ state: z.literal('answered'), status: z.number().int().min(100).max(599), body: z.unknown() }).strict(),
  z.object({ state: z.enum(['failed', 'running', 'unknown']) }).strict(),
]);

const peerModelRef = z.object({ nodeId: z.string().min(1), model: z.string().min(1) }).strict();

/** An owner's queue event to the master; a slave sends its lending state with it, an older one does not. */
export const offloadEventRequestSchema = z
  .object({
    owner: peerModelRef,
    trigger: z.enum(['enqueued', 'completed', 'borrowed_completed', 'probe_due', 'tick']),
    state: lendingNodeStateSchema.optional(),
  })
  .strict();

/** LEASE-5: an owner asks the master to run one of its queued requests on the lease's helper. */
export const relayRequestSchema = z
  .object({
    requestId: z.string(),
    owner: peerModelRef,
    helper: peerModelRef,
    endpoint: z.enum(['chat', 'completion', 'embedding', 'image']),
    json: z.record(z.string(), z.unknown()),
  })
  .strict();

/** The master's push of an owner's lease (null: none) to the slave that owns the model. */
export const leasePushRequestSchema = z.object({ owner: peerModelRef, lease: leaseGrantSchema.nullable() }).strict();

/** HOLD-4: an owner asks the master to cut off an overdue lent request. */
export const cutoffRequestSchema = z.object({ requestId: z.string().min(1) }).strict();

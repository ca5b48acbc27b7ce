import { z } from 'zod';

/**
 * Wire objects of the console's lending reads (UI-1, UI-2, UI-6): the gathered decision log
 * (`GET /router/v1/console/decisions` → a page of rows; LOG-1..4) and the Lending view
 * (`GET /router/v1/console/lending`: live leases, settings, each node's build and settings sync, held requests).
 * Shared with the renderer: zod only. The row's fields are store/decision-log-row.ts's DecisionRow, in table order
 * (test/unit/lending-console-parity.test.ts keeps the two equal).
 */

export const decisionKindSchema = z.enum(['plan', 'dispatch', 'helper']);
export type DecisionKindWire = z.infer<typeof decisionKindSchema>;

export const planOutcomeSchema = z.enum(['granted', 'probe', 'skipped']);

const ms = z.number().nullable();
const count = z.number().nullable();
const text = z.string().nullable();

/** One stored decision; `id` is per node, so rows of several nodes are told apart by (nodeId, id). */
export const decisionRowSchema = z
  .object({
    id: z.number().int(),
    at: z.number().describe('unix ms on the writing node'),
    nodeId: z.string(),
    routerVersion: z.string(),
    kind: decisionKindSchema,
    event: z.string().describe('a plan row: its outcome; else what happened (lent, returned, …)'),
    trigger: text,
    linkId: text,
    ownerNode: text,
    ownerModel: text,
    helperNode: text,
    helperModel: text,
    held: count,
    backlog: count,
    ownerDrainMs: ms,
    helperSwitchMs: ms,
    helperServiceMs: ms,
    serviceSource: text,
    helperIdleMs: ms,
    outcome: planOutcomeSchema.nullable(),
    reason: text,
    slots: count,
    requestsOut: count,
    ownerPredictedFinishMs: ms,
    ownerJobMs: ms,
    helperJobMs: ms,
    waitedMs: ms,
    borrowedInBackend: count,
    requestId: text,
    details: z.record(z.string(), z.unknown()).nullable(),
  })
  .strict();
export type DecisionRowWire = z.infer<typeof decisionRowSchema>;

/** Newest first; `nextCursor` asks for the next (older) page, null when there is none. */
export const decisionPageSchema = z
  .object({
    rows: z.array(decisionRowSchema),
    nextCursor: z.string().nullable(),
    missing: z.array(z.string()).optional().describe('members whose log could not be read'),
  })
  .strict();
export type DecisionPageWire = z.infer<typeof decisionPageSchema>;

const modelRefSchema = z.object({ nodeId: z.string(), model: z.string() }).strict();

/** A live lease as the master granted it (LEASE-4, LEASE-9). */
export const leaseGrantSchema = z
  .object({
    linkId: z.string(),
    owner: modelRefSchema,
    helper: modelRefSchema,
    slots: z.union([z.literal(1), z.literal(2)]),
    ttlMs: z.number().positive().max(86_400_000),
    probe: z.boolean(),
    ownerJobMs: ms,
    helperJobMs: ms,
    helperSwitchMs: ms,
    measured: z.boolean(),
    helperContextsize: z.number().nullable().optional(),
    helperMultimodal: z.boolean().optional(),
    helperUrl: z.string().url().nullable().optional(),
  })
  .strict();
export type LeaseGrantWire = z.infer<typeof leaseGrantSchema>;

/** A node's build and whether it runs the master's settings (UI-1). */
export const lendingNodeSchema = z
  .object({
    nodeId: z.string(),
    version: z.string().nullable(),
    settingsHash: z.string().nullable(),
    inSync: z.boolean(),
    linksVersion: z.number().int().optional(),
    guardiansVersion: z.number().int().optional(),
    healthy: z.boolean().optional(),
  })
  .strict();
export type LendingNodeWire = z.infer<typeof lendingNodeSchema>;

export const heldStateSchema = z.enum(['queued', 'held', 'lent', 'active']);
export type HeldState = z.infer<typeof heldStateSchema>;

/** One request in a router queue (UI-2); `firstArrival` is kept across returns (QUEUE-5). */
export const heldItemSchema = z
  .object({
    id: z.string(),
    state: heldStateSchema,
    firstArrival: z.string().describe('ISO time'),
    borrowed: z.boolean(),
    returned: z.boolean(),
    stream: z.boolean(),
    // Absent from older nodes. Predictions come from the model's cost fit; null: not priced (no fit yet).
    position: z
      .number()
      .int()
      .positive()
      .nullable()
      .optional()
      .describe('1-based place among the waiting requests; null when lent'),
    predictedStart: z
      .string()
      .nullable()
      .optional()
      .describe('ISO time it is predicted to start at the engine (waiting requests)'),
    predictedFinish: z
      .string()
      .nullable()
      .optional()
      .describe('ISO time it is predicted to finish, here or (lent) at the helper'),
    helper: z.string().nullable().optional().describe('a lent request: the helper, node/model'),
  })
  .strict();
export type HeldItemWire = z.infer<typeof heldItemSchema>;

/** An enrolled model's queue: `active` at the engine, `held` waiting in the router or lent to a helper. */
export const heldModelSchema = z
  .object({
    model: z.string(),
    depth: z.number().int(),
    active: z.array(heldItemSchema),
    held: z.array(heldItemSchema),
  })
  .strict();
export type HeldModelWire = z.infer<typeof heldModelSchema>;

/** `error`: the node's queues could not be read this time. */
export const heldNodeSchema = z
  .object({ nodeId: z.string(), models: z.array(heldModelSchema), error: z.string().optional() })
  .strict();
export type HeldNodeWire = z.infer<typeof heldNodeSchema>;

/**
 * One request a node is running for a model of its own (UI-2), whether or not the model is in a link: `via`
 * `backend` went straight to the engine (lane wait included), `router_queue` reached the engine from an enrolled
 * model's router queue, `static_route` is an endpoint of the static route table. `lentFrom`: a borrowed request,
 * with the owner it was lent from.
 */
export const activeRequestSchema = z
  .object({
    id: z.string(),
    model: z.string().describe('local ID on this node'),
    clusterId: z.string().describe('the ID clients use'),
    lane: z.string().describe('text, image, whisper, shared, or static'),
    started: z.string().describe('ISO time the node started it (reached the engine, for a queued one)'),
    stream: z.boolean(),
    via: z.enum(['backend', 'router_queue', 'static_route']),
    lentFrom: modelRefSchema.nullable(),
  })
  .strict();
export type ActiveRequestWire = z.infer<typeof activeRequestSchema>;

/** `error`: the node's active requests could not be read (an older build does not serve them). */
export const activeNodeSchema = z
  .object({ nodeId: z.string(), requests: z.array(activeRequestSchema), error: z.string().optional() })
  .strict();
export type ActiveNodeWire = z.infer<typeof activeNodeSchema>;

export const lendingViewSchema = z
  .object({
    leases: z.array(leaseGrantSchema),
    decisionsMade: z.number().int().nullable().describe('null: not a master (makes no decisions)'),
    settings: z.record(z.string(), z.union([z.number(), z.boolean(), z.string(), z.null()])),
    nodes: z.array(lendingNodeSchema),
    held: z.array(heldNodeSchema),
    active: z
      .array(activeNodeSchema)
      .optional()
      .describe("UI-2: every node's active requests (absent from older nodes)"),
  })
  .strict();
export type LendingViewWire = z.infer<typeof lendingViewSchema>;

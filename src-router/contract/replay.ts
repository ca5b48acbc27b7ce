import { z } from 'zod';
import { decisionRowSchema } from './decisions';

/**
 * What-if replay: the recorded arrivals of a time range replayed through the lending rules in simulated
 * time with changed settings or links; the console asks `POST /router/v1/console/replay` and the CLI prints the same
 * summary (`routerdesk replay`). Shared with the renderer: zod only.
 */

/** The settings a replay may change (cluster.* keys, durations in ms). */
export const REPLAY_SETTING_KEYS = [
  'scheduling_backend_depth',
  'scheduling_refresh_interval',
  'scheduling_min_samples',
  'scheduling_sample_window',
  'scheduling_context_reserve',
  'offload_probe_idle',
  'offload_hold_for_faster_helper',
] as const;
export type ReplaySettingKey = (typeof REPLAY_SETTING_KEYS)[number];

const modelRef = z.object({ nodeId: z.string().min(1), model: z.string().min(1) }).strict();

/** A link as a replay takes it (`--links FILE`, the console's changed links). */
export const replayLinkSchema = z
  .object({
    id: z.string().min(1).optional(),
    lane: z.enum(['image', 'text']).default('text'),
    owner: modelRef,
    helper: modelRef,
    loadIfUnloaded: z.boolean().default(true),
    restoreAfterBorrow: z.boolean().default(false),
  })
  .strict();
export type ReplayLinkWire = z.infer<typeof replayLinkSchema>;
export const replayLinksSchema = z.array(replayLinkSchema).max(1000);

/** The most a console replay may cover, and the most simulated events it may run. */
export const REPLAY_MAX_RANGE_MS = 24 * 3_600_000;
export const REPLAY_MAX_EVENTS = 2_000_000;
/**
 * The most wall-clock time a console replay may take on its node (reading every member's rows included): past it the
 * replay is stopped and answered with a 422 naming the budget, before the console's own 60 s wait ends.
 */
export const REPLAY_TIME_BUDGET_MS = 50_000;

const settingValue = z.union([z.number(), z.boolean(), z.string().max(40)]);

export const replayRequestSchema = z
  .object({
    from: z.number().int().nonnegative().describe('unix ms'),
    to: z.number().int().nonnegative().describe('unix ms'),
    /** Changed cluster settings, e.g. {offload_probe_idle: "30s"} or 30000 (ms). */
    settings: z.partialRecord(z.enum(REPLAY_SETTING_KEYS), settingValue).default({}),
    /** Replaces the recorded links when given. */
    links: replayLinksSchema.optional(),
    maxEvents: z.number().int().min(1).max(REPLAY_MAX_EVENTS).optional(),
  })
  .strict();
export type ReplayRequestWire = z.input<typeof replayRequestSchema>;

const nms = z.number().nullable();

/** One side of the comparison: as recorded, or as replayed. */
export const replayOutcomeSchema = z
  .object({
    requests: z.number().int(),
    bursts: z.array(
      z
        .object({ index: z.number().int(), startedAt: z.number(), requests: z.number().int(), makespanMs: z.number() })
        .strict(),
    ),
    waitP50Ms: nms,
    waitP95Ms: nms,
    completionP50Ms: nms,
    completionP95Ms: nms,
    lent: z.number().int(),
    returned: z.number().int(),
    cutOff: z.number().int(),
    loads: z.number().int(),
  })
  .strict();
export type ReplayOutcomeWire = z.infer<typeof replayOutcomeSchema>;

export const replayResultSchema = z
  .object({
    from: z.number(),
    to: z.number(),
    nodes: z.array(z.string()),
    links: z.number().int(),
    /** The settings the replay ran with (ms for durations). */
    settings: z.record(z.string(), z.union([z.number(), z.boolean()])),
    recorded: replayOutcomeSchema,
    replayed: replayOutcomeSchema,
    events: z.number().int(),
    /** The event cap stopped the replay early: the replayed numbers cover only part of the range. */
    capped: z.boolean(),
    /** Requests the replay could not price (no measured service time anywhere): replayed at 0 ms. */
    unpriced: z.number().int(),
    /** The console's replay: members whose rows could not be read (the replay ran without them). */
    missing: z.array(z.string()).optional(),
  })
  .strict();
export type ReplayResultWire = z.infer<typeof replayResultSchema>;

/**
 * One node's recorded rows for a replay (`GET /router/v1/node/replay-source?from&to`): the console's replay reads
 * every member's with it and parses what they send with these schemas (the fields are store/analytics.ts's RequestRow
 * and LoadRow, store/replay-source.ts's StoredLink, and the decision log's row).
 */
const optNum = z.number().nullable().optional();
const optText = z.string().nullable().optional();

export const replayRequestRowSchema = z
  .object({
    finishedAt: z.number(),
    nodeId: z.string(),
    model: z.string(),
    localId: z.string(),
    backend: z.string(),
    endpoint: z.enum(['chat', 'completion', 'embedding', 'image', 'transcription']),
    streamed: z.boolean(),
    promptBytes: optNum,
    promptTokens: optNum,
    tokensGenerated: optNum,
    imagePixels: optNum,
    imageSteps: optNum,
    imageCount: optNum,
    audioSeconds: optNum,
    queueWaitMs: z.number(),
    durationMs: z.number(),
    serviceMs: optNum,
    serviceSource: z.enum(['engine', 'derived', 'unknown']).nullable().optional(),
    derivedServiceMs: optNum,
    outcome: z.enum(['ok', 'error', 'cancelled', 'returned']),
    status: optNum,
    error: optText,
    guardianFor: optText,
    guardianReason: z.enum(['detected', 'engine_refused']).nullable().optional(),
    requestId: optText,
    lentFrom: optText,
  })
  .strict();

export const replayLoadRowSchema = z
  .object({
    finishedAt: z.number(),
    nodeId: z.string(),
    model: z.string(),
    localId: z.string(),
    backend: z.string(),
    lane: z.string(),
    durationMs: z.number(),
    success: z.boolean(),
    displacedLocalId: optText,
    error: optText,
  })
  .strict();

export const replayStoredLinkSchema = z
  .object({
    id: z.string(),
    lane: z.enum(['image', 'text']),
    ownerNode: z.string(),
    ownerModel: z.string(),
    helperNode: z.string(),
    helperModel: z.string(),
    loadIfUnloaded: z.boolean(),
    restoreAfterBorrow: z.boolean(),
  })
  .strict();

/** Rows of each kind a node answers for one range, at most (its `truncated` says when a cap cut it). */
export const REPLAY_SOURCE_CAP = 100_000;
export const REPLAY_SOURCE_HISTORY_CAP = 5_000;
/** The most bytes of a member's rows a console replay reads (the caps above fit well inside). */
export const REPLAY_SOURCE_MAX_BYTES = 256 * 1024 * 1024;

export const replaySourceSchema = z
  .object({
    nodeId: z.string().nullable(),
    requests: z.array(replayRequestRowSchema).max(REPLAY_SOURCE_CAP),
    history: z.array(replayRequestRowSchema).max(REPLAY_SOURCE_HISTORY_CAP),
    loads: z.array(replayLoadRowSchema).max(REPLAY_SOURCE_CAP),
    decisions: z.array(decisionRowSchema).max(REPLAY_SOURCE_CAP),
    links: z.array(replayStoredLinkSchema).max(10_000),
    truncated: z.boolean(),
  })
  .strict();
export type ReplaySourceWire = z.infer<typeof replaySourceSchema>;

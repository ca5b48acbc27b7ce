import { z } from 'zod';

/**
 * Wire objects of the lease timeline (the Lending tab's chart): the request and load analytics rows of every node of
 * the cluster for a time range (`GET /router/v1/console/timeline?from&to&limit`, gathered like the decision log from
 * each node's `GET /router/v1/node/timeline`). The decision rows come from the decision log itself. Shared with the
 * renderer: zod only. The fields are store/analytics.ts's RequestRow and LoadRow (the ones the timeline reads).
 */

/** Rows of each table per node, at most (the default is smaller: 5,000). */
export const TIMELINE_MAX_LIMIT = 20_000;

/** One finished request as the node that recorded it stored it (`nodeId`: who served it — a helper for a lent one). */
export const timelineRequestSchema = z
  .object({
    id: z.number().int(),
    finishedAt: z.number().describe('unix ms'),
    nodeId: z.string(),
    model: z.string(),
    localId: z.string(),
    endpoint: z.string(),
    streamed: z.boolean(),
    queueWaitMs: z.number(),
    durationMs: z.number().describe('arrival at the recording node to the end of the answer'),
    serviceMs: z.number().nullable(),
    outcome: z.string(),
    status: z.number().nullable(),
    requestId: z.string().nullable(),
    lentFrom: z.string().nullable().describe('a borrowed request on its helper: the owner, node/model'),
  })
  .strict();
export type TimelineRequestWire = z.infer<typeof timelineRequestSchema>;

/** One engine load attempt. */
export const timelineLoadSchema = z
  .object({
    id: z.number().int(),
    finishedAt: z.number(),
    nodeId: z.string(),
    model: z.string(),
    localId: z.string(),
    lane: z.string(),
    durationMs: z.number(),
    success: z.boolean(),
    displacedLocalId: z.string().nullable(),
    error: z.string().nullable(),
  })
  .strict();
export type TimelineLoadWire = z.infer<typeof timelineLoadSchema>;

/** One node's rows (`nodeId`: the node whose store they came from), oldest first; `truncated`: older rows were left out. */
export const timelineNodeSchema = z
  .object({
    nodeId: z.string(),
    requests: z.array(timelineRequestSchema),
    loads: z.array(timelineLoadSchema),
    truncated: z.boolean(),
  })
  .strict();
export type TimelineNodeWire = z.infer<typeof timelineNodeSchema>;

export const timelinePageSchema = z
  .object({
    from: z.number(),
    to: z.number(),
    nodes: z.array(timelineNodeSchema),
    missing: z.array(z.string()).optional().describe('members whose rows could not be read'),
  })
  .strict();
export type TimelinePageWire = z.infer<typeof timelinePageSchema>;

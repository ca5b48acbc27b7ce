import { z } from 'zod';

/** Wire objects of the node API (`/router/v1/node/*`, cluster token): registration, snapshots, runtime status. */

export const laneNameSchema = z.enum(['text', 'image', 'whisper', 'shared']);

/** One model config on one node, as that node advertises it (ID-1). */
/**
 * ID-1: where a cluster record's config came from, as the node holding the catalog sees it: one of its model config
 * files, a recipe of its store, a static route of its config, or another node of the cluster.
 */
export const recordSourceSchema = z.enum(['config_file', 'recipe', 'static_route', 'remote_node']);
export type RecordSource = z.infer<typeof recordSourceSchema>;

export const nodeModelRecordSchema = z
  .object({
    publicId: z.string().min(1),
    localId: z.string().min(1),
    backend: z.string(),
    capabilities: z.array(z.string()),
    lane: laneNameSchema,
    configHash: z.string(),
    modelHash: z.string().nullable(),
    contextsize: z.number().int().nullable(),
    parallel: z.number().int().nullable(),
    engine: z.string().nullable(),
    available: z.boolean(),
    // Optional on parse: an older node's record has none. A slave leaves it out of its snapshot (an older master's
    // strict schema would refuse the key); the master records its members' records as `remote_node`.
    source: recordSourceSchema.optional().describe('ID-1: where the config came from (absent from older nodes)'),
  })
  .strict();
export type NodeModelRecord = z.infer<typeof nodeModelRecordSchema>;

/** What a node tells the master about itself (HEALTH-1). */
export const nodeSnapshotSchema = z
  .object({
    nodeId: z.string().min(1),
    role: z.enum(['standalone', 'master', 'slave']),
    publicUrl: z.string().nullable(),
    version: z.string(),
    settingsHash: z.string(),
    startedAt: z.string(),
    runtimeStatus: z.boolean().describe('serves /router/v1/node/runtime-status (STT-5)'),
    linksVersion: z.number().int().optional().describe('version of the links this node applied (LEASE-1)'),
    guardiansVersion: z
      .number()
      .int()
      .optional()
      .describe('version of the guardian settings this node applied (GUARD-1)'),
    models: z.array(nodeModelRecordSchema),
  })
  .strict();
export type NodeSnapshot = z.infer<typeof nodeSnapshotSchema>;

export const registerResponseSchema = z
  .object({ accepted: z.literal(true), masterId: z.string(), syncIntervalMs: z.number() })
  .strict();

/** Per-model and whole-node load, for STT scheduling now and lending later. */
export const modelRuntimeSchema = z
  .object({
    localId: z.string(),
    publicId: z.string(),
    capabilities: z.array(z.string()),
    loaded: z.boolean(),
    loading: z.boolean(),
    active: z.number().int(),
    queued: z.number().int(),
  })
  .strict();

export const runtimeStatusSchema = z
  .object({
    nodeId: z.string(),
    at: z.number().describe('the node clock, unix ms'),
    models: z.array(modelRuntimeSchema),
    active: z.number().int().describe('whole node: requests at engines'),
    queued: z.number().int().describe('whole node: requests waiting for an engine'),
    idleMs: z.number().describe('time since the node last had own work'),
  })
  .strict();
export type RuntimeStatus = z.infer<typeof runtimeStatusSchema>;
export type ModelRuntime = z.infer<typeof modelRuntimeSchema>;

/** A node as the master sees it, for the console (Nodes screen). */
export const clusterNodeViewSchema = z
  .object({
    nodeId: z.string(),
    url: z.string().nullable(),
    role: z.enum(['standalone', 'master', 'slave']),
    local: z.boolean(),
    healthy: z.boolean(),
    lastSeen: z.string().nullable(),
    lastError: z.string().nullable(),
    version: z.string().nullable(),
    settingsHash: z.string().nullable(),
    models: z.number().int(),
    warnings: z
      .array(z.string())
      .optional()
      .describe("what of the member's snapshot the master did not take (over its bounds), and why"),
  })
  .strict();
export type ClusterNodeView = z.infer<typeof clusterNodeViewSchema>;

/** One model of the merged cluster listing (ID-2). */
export const clusterModelSchema = z
  .object({
    id: z.string(),
    baseId: z.string(),
    capabilities: z.array(z.string()),
    replicas: z.array(
      z
        .object({
          nodeId: z.string(),
          localId: z.string(),
          available: z.boolean(),
          source: recordSourceSchema.optional(),
        })
        .strict(),
    ),
    configHash: z.string(),
    modelHash: z.string().nullable(),
    /** ID-1: this node's replica's source when it has one, else the first replica's; optional (an older node's answer has none). */
    source: recordSourceSchema.optional(),
  })
  .strict();
export type ClusterModel = z.infer<typeof clusterModelSchema>;

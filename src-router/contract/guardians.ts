import { z } from 'zod';

/**
 * Wire objects of guardian models (GUARD-1, UI-4): the site API `/router/v1/site/guardians` on the master (or a
 * standalone node) and the push of the settings to slaves. A guardian is a multimodal text model that answers image
 * requests addressed to a text-only model. It is set for the whole cluster, per node or per model; the most specific
 * setting wins (model, then node, then cluster). Shared with the renderer: zod only.
 */

export const guardianScopeSchema = z.enum(['cluster', 'node', 'model']);
export type GuardianScope = z.infer<typeof guardianScopeSchema>;

/** A model config on a node, named by its local ID on that node (as a link end is). */
export const guardianRefSchema = z
  .object({
    node_id: z.string().min(1),
    model: z.string().min(1).describe("the config's local ID on that node"),
  })
  .strict();
export type GuardianRef = z.infer<typeof guardianRefSchema>;

const nodeId = z.string().min(1);
const model = z.string().min(1).describe("the text-only model's local ID on that node");

/** PUT body: one setting, created or replaced. */
export const guardianPutSchema = z.discriminatedUnion('scope', [
  z.object({ scope: z.literal('cluster'), guardian: guardianRefSchema }).strict(),
  z.object({ scope: z.literal('node'), node_id: nodeId, guardian: guardianRefSchema }).strict(),
  z.object({ scope: z.literal('model'), node_id: nodeId, model, guardian: guardianRefSchema }).strict(),
]);
export type GuardianPut = z.infer<typeof guardianPutSchema>;

/** DELETE body: the scope keys of the setting to remove. */
export const guardianDeleteSchema = z.discriminatedUnion('scope', [
  z.object({ scope: z.literal('cluster') }).strict(),
  z.object({ scope: z.literal('node'), node_id: nodeId }).strict(),
  z.object({ scope: z.literal('model'), node_id: nodeId, model }).strict(),
]);
export type GuardianDelete = z.infer<typeof guardianDeleteSchema>;

/** One stored setting: `node_id` is null for the cluster scope, `model` null unless the scope is a model. */
export const guardianSettingSchema = z
  .object({
    scope: guardianScopeSchema,
    node_id: z.string().nullable(),
    model: z.string().nullable(),
    guardian: guardianRefSchema,
    updated_at: z.string().describe('ISO time'),
  })
  .strict();
export type GuardianSetting = z.infer<typeof guardianSettingSchema>;

/** The guardian in force for one text-only model of the cluster, and which setting it came from. */
export const guardianEffectiveSchema = z
  .object({
    node_id: z.string(),
    model: z.string().describe('local ID on that node'),
    public_id: z.string(),
    guardian: guardianRefSchema.nullable(),
    from: guardianScopeSchema.nullable().describe('the setting in force; null: no guardian, image requests get a 400'),
    /** The guardian named is in the catalog now (a node that left takes its models with it). */
    available: z.boolean(),
  })
  .strict();
export type GuardianEffective = z.infer<typeof guardianEffectiveSchema>;

/** A model that can be a guardian: a multimodal text model of the cluster catalog. */
export const guardianCandidateSchema = z
  .object({ node_id: z.string(), model: z.string(), public_id: z.string() })
  .strict();
export type GuardianCandidate = z.infer<typeof guardianCandidateSchema>;

/** GET /router/v1/site/guardians */
export const guardiansViewSchema = z
  .object({
    version: z.number().int().min(0).describe('bumped on every change; each node reports the version it runs'),
    settings: z.array(guardianSettingSchema),
    effective: z.array(guardianEffectiveSchema).describe('every text-only model of the cluster'),
    candidates: z.array(guardianCandidateSchema),
    nodes: z.array(z.string()).describe('every node of the cluster, for the node scope'),
  })
  .strict();
export type GuardiansView = z.infer<typeof guardiansViewSchema>;

/**
 * One setting as the master pushes it (POST /router/v1/node/guardians) and answers a slave's read of its settings.
 * `guardian_url` is the master's view; a slave takes the URL from the master's member list instead.
 */
export const guardianPushedSettingSchema = z
  .object({
    scope: guardianScopeSchema,
    node_id: z.string().nullable(),
    model: z.string().nullable(),
    guardian: guardianRefSchema,
    /** Where the guardian's node answers worker requests; null when it is the receiving node or unknown now. */
    guardian_url: z.string().nullable(),
    /** The guardian's public ID in the catalog (responses name it in `x-routerdesk-served-by`). */
    guardian_public_id: z.string().nullable(),
  })
  .strict();
export type GuardianPushedSetting = z.infer<typeof guardianPushedSettingSchema>;

export const guardiansPushSchema = z
  .object({
    version: z.number().int().min(0),
    epoch: z.string().optional(),
    settings: z.array(guardianPushedSettingSchema),
  })
  .strict();
export type GuardiansPush = z.infer<typeof guardiansPushSchema>;

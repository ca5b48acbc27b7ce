import { z } from 'zod';

/**
 * Wire objects of the site API's routing links (LINK-*, UI-3): `/router/v1/site/routing-groups` (image lane) and
 * `/router/v1/site/text-routing-groups` (text lane). A link is one-way: the owner lends held work, the helper borrows
 * it (LINK-1). Shared with the renderer: zod only.
 */

export const linkLaneSchema = z.enum(['image', 'text']);
export type LinkLane = z.infer<typeof linkLaneSchema>;

/** One end of a link: a model config on a node, named by its local ID on that node. */
export const linkEndSchema = z
  .object({
    node_id: z.string().min(1),
    model: z.string().min(1).describe("the config's local ID on that node"),
  })
  .strict();
export type LinkEnd = z.infer<typeof linkEndSchema>;

/** Model hashes equal ('same'), or differ or are unknown on either side ('different') (LINK-3). */
export const linkWeightsSchema = z.enum(['same', 'different']);
export type LinkWeights = z.infer<typeof linkWeightsSchema>;

/** POST body: create one link (LINK-1, LINK-4). */
export const linkCreateSchema = z
  .object({
    owner: linkEndSchema,
    helper: linkEndSchema,
    load_if_unloaded: z.boolean().default(true),
    restore_after_borrow: z.boolean().default(false),
    acknowledge_different_weights: z
      .boolean()
      .optional()
      .describe('required (true) for the first link to a helper model with different weights'),
  })
  .strict();
export type LinkCreateInput = z.input<typeof linkCreateSchema>;
export type LinkCreate = z.output<typeof linkCreateSchema>;

/** PATCH body: the flags and the acknowledgement only; the ends of a link never change (delete and create instead). */
export const linkUpdateSchema = z
  .object({
    load_if_unloaded: z.boolean().optional(),
    restore_after_borrow: z.boolean().optional(),
    acknowledge_different_weights: z.boolean().optional(),
  })
  .strict();
export type LinkUpdate = z.infer<typeof linkUpdateSchema>;

/** A stored link, as the site API returns it. */
export const linkRecordSchema = z
  .object({
    id: z.string(),
    lane: linkLaneSchema,
    owner: linkEndSchema,
    helper: linkEndSchema,
    load_if_unloaded: z.boolean(),
    restore_after_borrow: z.boolean(),
    weights: linkWeightsSchema,
    acknowledged: z.boolean().describe('the operator acknowledged that the helper may answer with different weights'),
    created_at: z.string().describe('ISO time'),
    updated_at: z.string().describe('ISO time'),
  })
  .strict();
export type LinkRecord = z.infer<typeof linkRecordSchema>;

export const linkListSchema = z.object({ version: z.number().int(), links: z.array(linkRecordSchema) }).strict();
export type LinkList = z.infer<typeof linkListSchema>;

/** One entry of the link picker (UI-3): every model of the lane on another node, ineligible ones disabled with the reason. */
export const linkCandidateSchema = z
  .object({
    node_id: z.string(),
    model: z.string(),
    public_id: z.string(),
    weights: linkWeightsSchema,
    label: z.enum(['same weights', 'different weights']),
    disabled: z.boolean(),
    reason: z
      .string()
      .nullable()
      .describe('disabled: why it cannot be linked; acknowledgement_required: the warning to acknowledge; else null'),
    code: z.string().nullable(),
    acknowledgement_required: z.boolean().describe('saving this link needs acknowledge_different_weights: true'),
  })
  .strict();
export type LinkCandidate = z.infer<typeof linkCandidateSchema>;

export const linkCandidateListSchema = z
  .object({
    lane: linkLaneSchema,
    anchor: linkEndSchema.extend({ public_id: z.string(), model_hash: z.string().nullable() }).strict(),
    anchor_role: z
      .enum(['owner', 'helper'])
      .describe('owner: candidates are helpers it would lend to; helper: candidates are owners'),
    candidates: z.array(linkCandidateSchema),
  })
  .strict();
export type LinkCandidateList = z.infer<typeof linkCandidateListSchema>;

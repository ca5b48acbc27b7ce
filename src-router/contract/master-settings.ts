import { z } from 'zod';
import { guardiansPushSchema } from './guardians';

/**
 * What a slave takes from its master only (LEASE-1, GUARD-1): links and guardian settings. The master's push to a
 * slave (`POST /router/v1/node/links`, `/router/v1/node/guardians`) is a nudge; the slave then reads the settings
 * from the master it is configured with (`GET /router/v1/node/master-settings?node=ID`, cluster token), and does so
 * at start and every sync interval too. Pushes of one master run carry its epoch (`node_id:start-time`).
 */

const ref = z.object({ nodeId: z.string().min(1), model: z.string().min(1) }).strict();

/** One link as the master hands it to slaves. */
export const linkSpecSchema = z
  .object({
    id: z.string(),
    lane: z.enum(['image', 'text']),
    owner: ref,
    helper: ref,
    loadIfUnloaded: z.boolean(),
    restoreAfterBorrow: z.boolean(),
  })
  .strict();

/** The links the master runs (the body of a links push, and the `links` of the settings a slave reads). */
export const linksPushSchema = z
  .object({ version: z.number().int().min(0), epoch: z.string().optional(), links: z.array(linkSpecSchema) })
  .strict();
export type LinksPush = z.infer<typeof linksPushSchema>;

/** A node of the cluster as its master lists it: where it answers worker requests (null: not known to the master). */
export const masterMemberSchema = z.object({ node_id: z.string().min(1), url: z.string().nullable() }).strict();
export type MasterMember = z.infer<typeof masterMemberSchema>;

/**
 * GET /router/v1/node/master-settings?node=ID on the master: its links and guardian settings as that slave runs them,
 * and its members. A slave takes a guardian's URL from `members` (by the guardian's node ID), never from the setting.
 */
export const masterSettingsSchema = z
  .object({
    master: z.string().min(1).describe("the master's node ID"),
    links: linksPushSchema,
    guardians: guardiansPushSchema,
    members: z
      .array(masterMemberSchema)
      .describe('the master first (its url: `cluster.public_url`, or null), then every member it knows'),
  })
  .strict();
export type MasterSettings = z.infer<typeof masterSettingsSchema>;

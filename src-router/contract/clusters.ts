import { z } from 'zod';

/**
 * Wire objects of connection profiles (UI-5): remote clusters the local node keeps — a name, the URL of the remote
 * master (or standalone node) and that node's console token — under `/router/v1/console/clusters`. A token is written,
 * never read back. Shared with the renderer: zod only.
 */

const URL_MESSAGE = 'an http(s) URL of a router node, without a path, query or credentials (e.g. http://10.0.0.5:8080)';

/** The shape of such a URL as the API document can say it (scheme, authority without credentials, no path). */
const NODE_URL_PATTERN = /^\s*[hH][tT][tT][pP][sS]?:\/\/[^\s/?#@]+\/?\s*$/;

const httpUrl = z
  .string()
  .trim()
  .max(2000)
  .regex(NODE_URL_PATTERN, URL_MESSAGE)
  .refine((u) => {
    try {
      const p = new URL(u);
      return (
        (p.protocol === 'http:' || p.protocol === 'https:') &&
        !p.username &&
        !p.password &&
        (p.pathname === '/' || p.pathname === '') &&
        !p.search &&
        !p.hash
      );
    } catch {
      return false;
    }
  }, URL_MESSAGE);

const name = z.string().trim().min(1, 'a name is required').max(80);
const token = z.string().min(1, 'the remote console token is required').max(1000);

/** POST body: the local node calls the remote once with the token before it keeps the profile. */
export const clusterProfileCreateSchema = z.object({ name, url: httpUrl, token }).strict();
export type ClusterProfileCreate = z.infer<typeof clusterProfileCreateSchema>;

/** PATCH body: what changes (a new URL or token is tested again). */
export const clusterProfilePatchSchema = z
  .object({ name: name.optional(), url: httpUrl.optional(), token: token.optional() })
  .strict()
  .refine(
    (p) => p.name !== undefined || p.url !== undefined || p.token !== undefined,
    'nothing to change: name, url or token',
  )
  .meta({ anyOf: [{ required: ['name'] }, { required: ['url'] }, { required: ['token'] }] });
export type ClusterProfilePatch = z.infer<typeof clusterProfilePatchSchema>;

export const clusterRoleSchema = z.enum(['standalone', 'master', 'slave']);

/** One cluster as the switcher lists it: the local one first (`id` `local`), then every profile. Never a token. */
export const clusterViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    local: z.boolean(),
    /** Null for the local cluster (the console is already talking to it). */
    url: z.string().nullable(),
    reachable: z.boolean(),
    role: clusterRoleSchema.nullable(),
    nodeId: z.string().nullable(),
    version: z.string().nullable(),
    lastError: z.string().nullable(),
    /** When the remote was last asked (ISO). */
    checkedAt: z.string().nullable(),
  })
  .strict();
export type ClusterView = z.infer<typeof clusterViewSchema>;

export const clusterListSchema = z.object({ clusters: z.array(clusterViewSchema) }).strict();
export type ClusterList = z.infer<typeof clusterListSchema>;

/** The prefix that reaches a cluster's console and site APIs through the local node (`local`: this node itself). */
export const clusterApiPrefix = (id: string) => `/router/v1/console/clusters/${encodeURIComponent(id)}`;

import { z } from 'zod';

/** Wire objects of the asset and recipe APIs (ASSET-2..4). Shared with the renderer: zod only. */

const sha256 = z.string().regex(/^[0-9a-fA-F]{64}$/, 'a sha256: 64 hex digits');

/**
 * POST /router/v1/console/assets/fetch: bring the file with `sha256` from another node of the cluster into a local
 * root. The source is a node of the configured relationship (`nodeId`, or its `url`); where the file goes is chosen
 * here (`root`, default `shared` when configured, else `models`; the file name from `name`, never a path).
 */
export const assetFetchRequestSchema = z
  .object({
    nodeId: z.string().min(1).optional(),
    url: z.string().url().optional().describe('the source node by URL instead of node id'),
    sha256,
    name: z.string().min(1).max(255).optional().describe('file name hint; only its last segment is used'),
    expectedSize: z.number().int().nonnegative().optional(),
    root: z.string().min(1).optional().describe('destination root on this node'),
  })
  .strict()
  .refine((b) => (b.nodeId === undefined) !== (b.url === undefined), {
    message: 'give exactly one of nodeId and url',
    path: ['nodeId'],
  })
  .meta({ oneOf: [{ required: ['nodeId'] }, { required: ['url'] }] });
export type AssetFetchRequest = z.infer<typeof assetFetchRequestSchema>;

/** POST /router/v1/node/load: preload one local model config (explicit recipe loading, ASSET-4). */
export const nodeLoadRequestSchema = z.object({ localId: z.string().min(1) }).strict();
export type NodeLoadRequest = z.infer<typeof nodeLoadRequestSchema>;

export const nodeLoadResponseSchema = z
  .object({ nodeId: z.string(), localId: z.string(), state: z.string(), durationMs: z.number() })
  .strict();
export type NodeLoadResponse = z.infer<typeof nodeLoadResponseSchema>;

import { z } from 'zod';
import { runtimeStatusSchema } from './node';

/**
 * The lane state of every node of the cluster, for the Models screen's merged catalog:
 * `GET /router/v1/console/cluster/lanes` gathers each member's runtime status through the node API (bounded
 * time-outs); a member that cannot answer is listed with its error, never dropped. This node first.
 */
export const clusterLaneNodeSchema = z
  .object({
    nodeId: z.string(),
    local: z.boolean(),
    /** The node's runtime status as it answered; null with `error` when it could not be read. */
    status: runtimeStatusSchema.nullable(),
    error: z.string().nullable(),
  })
  .strict();
export type ClusterLaneNode = z.infer<typeof clusterLaneNodeSchema>;

export const clusterLanesSchema = z.object({ nodes: z.array(clusterLaneNodeSchema) }).strict();
export type ClusterLanes = z.infer<typeof clusterLanesSchema>;

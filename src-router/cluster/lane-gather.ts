import type { ClusterLanes, RuntimeStatus } from '../contract';

export interface LaneGatherDeps {
  localNodeId: string;
  local(): RuntimeStatus;
  /** Known members (the master's slaves); empty on standalone and slave nodes. */
  members(): { nodeId: string; url: string }[];
  /** A member's runtime status through the node API, parsed with the contract and bounded in time. */
  remote(url: string): Promise<RuntimeStatus>;
}

/** The lane state of every node: this node's own, then each member's as it answers, or its error. */
export async function gatherClusterLanes(deps: LaneGatherDeps): Promise<ClusterLanes> {
  const remotes = await Promise.all(
    deps.members().map(async (m) => {
      try {
        return { nodeId: m.nodeId, local: false, status: await deps.remote(m.url), error: null };
      } catch (err) {
        return { nodeId: m.nodeId, local: false, status: null, error: (err as Error).message };
      }
    }),
  );
  return { nodes: [{ nodeId: deps.localNodeId, local: true, status: deps.local(), error: null }, ...remotes] };
}

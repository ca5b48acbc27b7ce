import type { ClusterLaneNode } from '../../../src-router/contract';
import type { ApiFailure } from '../api/console-client';
import type { SliceCreator } from './types';

export interface LanesState {
  /** `cluster/lanes` as last read: every node's lane state (this node first); null before the first good answer. */
  nodes: ClusterLaneNode[] | null;
  loading: boolean;
  failure: ApiFailure | null;
  fetchedAt: number | null;
}

export interface LanesSlice {
  lanes: LanesState;
  /** Re-reads every node's lane state (concurrent calls share one round trip). */
  fetchLanes(): Promise<void>;
}

const isRejection = (f: ApiFailure) => f.kind === 'rejected' || f.kind === 'no-token';

export const createLanesSlice: SliceCreator<LanesSlice> = (deps) => (set) => {
  let inFlight: Promise<void> | null = null;

  async function load(): Promise<void> {
    set((s) => ({ lanes: { ...s.lanes, loading: true } }));
    const result = await deps.client.clusterLanes();
    if (result.ok) {
      set({ lanes: { nodes: result.value.nodes, loading: false, failure: null, fetchedAt: deps.now() } });
      return;
    }
    // A rejected token hides what it used to show; a transient failure keeps the last answer.
    set((s) => ({
      lanes: {
        ...s.lanes,
        nodes: isRejection(result.failure) ? null : s.lanes.nodes,
        loading: false,
        failure: result.failure,
      },
    }));
  }

  return {
    lanes: { nodes: null, loading: false, failure: null, fetchedAt: null },
    fetchLanes: () => {
      inFlight ??= load().finally(() => {
        inFlight = null;
      });
      return inFlight;
    },
  };
};

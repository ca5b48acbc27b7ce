import type { ClusterModel, ClusterNodeView } from '../../../src-router/contract';
import type { ApiFailure } from '../api/console-client';
import type { SliceCreator } from './types';

export interface ClusterState {
  /** `cluster/nodes` as last read (this node first); null before the first good answer. */
  nodes: ClusterNodeView[] | null;
  /** `cluster/models`, the merged catalog (ID-2); null before the first good answer. */
  models: ClusterModel[] | null;
  loading: boolean;
  failure: ApiFailure | null;
  modelsFailure: ApiFailure | null;
  fetchedAt: number | null;
}

export interface ClusterSlice {
  cluster: ClusterState;
  /** Re-reads the nodes and the merged catalog (concurrent calls share one round trip). */
  fetchCluster(): Promise<void>;
}

const isRejection = (f: ApiFailure) => f.kind === 'rejected' || f.kind === 'no-token';

export const createClusterSlice: SliceCreator<ClusterSlice> = (deps) => (set) => {
  let inFlight: Promise<void> | null = null;

  async function load(): Promise<void> {
    set((s) => ({ cluster: { ...s.cluster, loading: true } }));
    const [nodes, models] = await Promise.all([deps.client.clusterNodes(), deps.client.clusterModels()]);
    set((s) => {
      const c = s.cluster;
      const next = { ...c, loading: false };
      // A rejected token hides what it used to show; a transient failure keeps the last answer.
      if (nodes.ok) Object.assign(next, { nodes: nodes.value.nodes, failure: null, fetchedAt: deps.now() });
      else Object.assign(next, { nodes: isRejection(nodes.failure) ? null : c.nodes, failure: nodes.failure });
      if (models.ok) Object.assign(next, { models: models.value.models, modelsFailure: null });
      else
        Object.assign(next, { models: isRejection(models.failure) ? null : c.models, modelsFailure: models.failure });
      return { cluster: next };
    });
  }

  return {
    cluster: { nodes: null, models: null, loading: false, failure: null, modelsFailure: null, fetchedAt: null },
    fetchCluster: () => {
      inFlight ??= load().finally(() => {
        inFlight = null;
      });
      return inFlight;
    },
  };
};

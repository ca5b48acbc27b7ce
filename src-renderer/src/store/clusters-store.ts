import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ClusterProfileCreate, ClusterProfilePatch, ClusterView } from '../../../src-router/contract';
import { LOCAL_CLUSTER } from '../api/cluster-path';
import { type ApiFailure, type ApiResult, createConsoleClient, type FetchLike } from '../api/console-client';
import { type AppStore, type ConnectionInfo, createConsoleStore } from './app-store';

/**
 * The cluster switcher (UI-5): the local node's connection profiles, which cluster is selected, and the store of the
 * selected one. The profiles belong to the local node whichever cluster is shown, so they live beside the per-cluster
 * store, not in it. Switching builds a new store: every slice starts empty and reads its cluster again, and answers
 * still in flight for the previous cluster land in the discarded store.
 */
export interface ClustersState {
  /** `GET /router/v1/console/clusters` as last read (local first); null before the first good answer. */
  list: ClusterView[] | null;
  loading: boolean;
  failure: ApiFailure | null;
  fetchedAt: number | null;
  /** The selected cluster's id (`local`: this node). */
  selected: string;
  /** The store of the selected cluster. */
  session: AppStore;
  fetchClusters(): Promise<void>;
  /** Tests and keeps a profile; the node's refusal is returned as is (a 400 names the field: `param`). */
  addCluster(input: ClusterProfileCreate): Promise<ApiResult<ClusterView>>;
  /** Changes a profile (tested again when its URL or token changes); the node's refusal is returned as is. */
  updateCluster(id: string, patch: ClusterProfilePatch): Promise<ApiResult<ClusterView>>;
  /** Forgets a profile; when it was selected, the local cluster is selected. */
  removeCluster(id: string): Promise<ApiResult<null>>;
  select(id: string): void;
}

export interface ClustersDeps extends ConnectionInfo {
  fetch: FetchLike;
  now(): number;
  /** Told of every switch (the app writes it into the address so a reload stays there). */
  onSelect?(id: string): void;
  /** Sends the page elsewhere (following the node to a new address after a Settings save); absent: it stays. */
  navigate?: (href: string) => void;
}

export type ClustersStore = StoreApi<ClustersState>;

export function createClustersStore(deps: ClustersDeps, initial: string = LOCAL_CLUSTER): ClustersStore {
  // Profiles are the local node's: always the unmapped client.
  const local = createConsoleClient({ url: deps.url, token: deps.token, fetch: deps.fetch });
  const sessionFor = (cluster: string) =>
    createConsoleStore({ url: deps.url, token: deps.token, cluster }, deps.fetch, deps.now, deps.navigate);
  let inFlight: Promise<void> | null = null;

  return createStore<ClustersState>()((set, get) => {
    const select = (id: string) => {
      if (id === get().selected) return;
      set({ selected: id, session: sessionFor(id) });
      deps.onSelect?.(id);
    };

    async function load(): Promise<void> {
      set({ loading: true });
      const result = await local.clusters();
      if (!result.ok) {
        set({ loading: false, failure: result.failure });
        return;
      }
      set({ list: result.value.clusters, loading: false, failure: null, fetchedAt: deps.now() });
      // A profile removed elsewhere (or a stale address): back to the local cluster.
      if (!result.value.clusters.some((c) => c.id === get().selected)) select(LOCAL_CLUSTER);
    }
    const fetchClusters = () => {
      inFlight ??= load().finally(() => {
        inFlight = null;
      });
      return inFlight;
    };

    return {
      list: null,
      loading: false,
      failure: null,
      fetchedAt: null,
      selected: initial,
      session: sessionFor(initial),
      fetchClusters,
      addCluster: async (input) => {
        const result = await local.addCluster(input);
        if (result.ok) {
          if (inFlight) await inFlight;
          await fetchClusters();
        }
        return result;
      },
      updateCluster: async (id, patch) => {
        const result = await local.updateCluster(id, patch);
        if (result.ok) {
          if (inFlight) await inFlight;
          await fetchClusters();
        }
        return result;
      },
      removeCluster: async (id) => {
        const result = await local.removeCluster(id);
        if (result.ok) {
          if (get().selected === id) select(LOCAL_CLUSTER);
          if (inFlight) await inFlight;
          await fetchClusters();
        }
        return result;
      },
      select,
    };
  });
}

import { createStore, type StoreApi } from 'zustand/vanilla';
import { LOCAL_CLUSTER } from '../api/cluster-path';
import { createConsoleClient, type FetchLike } from '../api/console-client';
import { followMove } from '../settings/follow-move';
import { createBenchSlice } from './bench-slice';
import { createClusterSlice } from './cluster-slice';
import { createConnectionSlice } from './connection-slice';
import { createDecisionsSlice } from './decisions-slice';
import { createGuardiansSlice } from './guardians-slice';
import { createLanesSlice } from './lanes-slice';
import { createLendingSlice } from './lending-slice';
import { createLinksSlice } from './links-slice';
import { createModelConfigsSlice } from './model-configs-slice';
import { createModelsSlice } from './models-slice';
import { createReplaySlice } from './replay-slice';
import { createRoutingSlice } from './routing-slice';
import { createRuntimeSlice } from './runtime-slice';
import { createSettingsSlice } from './settings-slice';
import { createTimelineSlice } from './timeline-slice';
import type { AppState, StoreDeps } from './types';

export type AppStore = StoreApi<AppState>;

/** One store made of typed slices. Slices mirror server state; nothing here computes routing. */
export function createAppStore(url: string, deps: StoreDeps): AppStore {
  return createStore<AppState>()((set, get, api) => ({
    ...createConnectionSlice(url)(deps)(set, get, api),
    ...createModelsSlice(deps)(set, get, api),
    ...createRuntimeSlice(deps)(set, get, api),
    ...createRoutingSlice(deps)(set, get, api),
    ...createClusterSlice(deps)(set, get, api),
    ...createLanesSlice(deps)(set, get, api),
    ...createLendingSlice(deps)(set, get, api),
    ...createDecisionsSlice(deps)(set, get, api),
    ...createLinksSlice(deps)(set, get, api),
    ...createGuardiansSlice(deps)(set, get, api),
    ...createSettingsSlice(deps)(set, get, api),
    ...createBenchSlice(deps)(set, get, api),
    ...createTimelineSlice(deps)(set, get, api),
    ...createReplaySlice(deps)(set, get, api),
    ...createModelConfigsSlice(deps)(set, get, api),
    refresh: async () => {
      await Promise.all([get().fetchModels()]);
    },
    refreshModels: async () => {
      // A token that is not an operator's was refused the models folder once: it is not asked again on every poll.
      const refused = get().modelConfigs.failure?.kind === 'refused';
      await Promise.all([get().fetchModels(), refused ? undefined : get().fetchModelConfigs()]);
      if (get().connection.node?.role === 'master') await Promise.all([get().fetchCluster(), get().fetchLanes()]);
    },
    refreshRuntime: async () => {
      await Promise.all([get().fetchRuntimeHealth(), get().fetchRouting(), get().fetchCluster(), get().fetchEngines()]);
    },
    refreshNodes: async () => {
      await Promise.all([get().fetchCluster(), get().fetchLending()]);
    },
    refreshLending: async () => {
      const d = get().decisions;
      await Promise.all([
        get().fetchLending(),
        get().fetchCluster(),
        get().fetchGuardians(),
        d.pages <= 1 && !d.loading ? get().loadDecisions() : undefined,
      ]);
    },
    refreshLinks: async () => {
      await Promise.all([get().fetchLinks(), get().fetchCluster()]);
    },
  }));
}

export interface ConnectionInfo {
  url: string;
  token: string;
}

/**
 * The store of one cluster wired to the real console API: `cluster` absent or `local` is the node itself, a profile's
 * id goes through the local node's cluster proxy — the same client, slices and screens either way (UI-5).
 */
export function createConsoleStore(
  info: ConnectionInfo & { cluster?: string },
  fetchImpl: FetchLike = (input, init) => fetch(input, init),
  now: () => number = Date.now,
  navigate?: (href: string) => void,
): AppStore {
  const local = !info.cluster || info.cluster === LOCAL_CLUSTER;
  return createAppStore(info.url, {
    client: createConsoleClient({ url: info.url, token: info.token, fetch: fetchImpl, cluster: info.cluster ?? null }),
    now,
    // Only this node's own page can follow it to a new address (a remote cluster's node is reached through here).
    ...(local && navigate
      ? {
          followMove: (to: string, code: string) =>
            followMove({
              from: info.url,
              to,
              code,
              fetch: fetchImpl,
              navigate,
              now,
              sleep: (ms) => new Promise<void>((r) => setTimeout(r, ms)),
            }),
        }
      : {}),
  });
}

import { createStore, type StoreApi } from 'zustand/vanilla';
import { createConsoleClient, type FetchLike } from '../api/console-client';
import { createBenchSlice } from './bench-slice';
import { createClusterSlice } from './cluster-slice';
import { createConnectionSlice } from './connection-slice';
import { createDecisionsSlice } from './decisions-slice';
import { createGuardiansSlice } from './guardians-slice';
import { createLendingSlice } from './lending-slice';
import { createLinksSlice } from './links-slice';
import { createModelsSlice } from './models-slice';
import { createRoutingSlice } from './routing-slice';
import { createRuntimeSlice } from './runtime-slice';
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
    ...createLendingSlice(deps)(set, get, api),
    ...createDecisionsSlice(deps)(set, get, api),
    ...createLinksSlice(deps)(set, get, api),
    ...createGuardiansSlice(deps)(set, get, api),
    ...createBenchSlice(deps)(set, get, api),
    refresh: async () => {
      await Promise.all([get().fetchModels()]);
    },
    refreshRuntime: async () => {
      await Promise.all([get().fetchRuntimeHealth(), get().fetchRouting()]);
    },
    refreshNodes: async () => {
      await Promise.all([get().fetchCluster(), get().fetchLending()]);
    },
    refreshLending: async () => {
      const d = get().decisions;
      await Promise.all([get().fetchLending(), get().fetchCluster(), get().fetchGuardians(), d.pages <= 1 && !d.loading ? get().loadDecisions() : undefined]);
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

/** The store wired to the real console API. */
export function createConsoleStore(info: ConnectionInfo, fetchImpl: FetchLike = (input, init) => fetch(input, init)): AppStore {
  return createAppStore(info.url, { client: createConsoleClient({ url: info.url, token: info.token, fetch: fetchImpl }), now: Date.now });
}

import { createStore, type StoreApi } from 'zustand/vanilla';
import { createConsoleClient, type FetchLike } from '../api/console-client';
import { createConnectionSlice } from './connection-slice';
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
    refresh: async () => {
      await Promise.all([get().fetchModels()]);
    },
    refreshRuntime: async () => {
      await Promise.all([get().fetchRuntimeHealth(), get().fetchRouting()]);
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

import type { StateCreator } from 'zustand/vanilla';
import type { ConsoleClient } from '../api/console-client';
import type { ConnectionSlice } from './connection-slice';
import type { ModelsSlice } from './models-slice';

/** What the store needs from outside; tests inject both. */
export interface StoreDeps {
  client: ConsoleClient;
  now: () => number;
}

export interface RootActions {
  /** Re-reads every slice from the node. Concurrent calls share one round trip per slice. */
  refresh(): Promise<void>;
}

export type AppState = ConnectionSlice & ModelsSlice & RootActions;

/** A slice sees the whole store (to call other slices' actions) but owns only its own keys. */
export type SliceCreator<T> = (deps: StoreDeps) => StateCreator<AppState, [], [], T>;

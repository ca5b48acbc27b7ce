import type { StateCreator } from 'zustand/vanilla';
import type { ConsoleClient } from '../api/console-client';
import type { ConnectionSlice } from './connection-slice';
import type { ModelsSlice } from './models-slice';
import type { RoutingSlice } from './routing-slice';
import type { RuntimeSlice } from './runtime-slice';

/** What the store needs from outside; tests inject both. */
export interface StoreDeps {
  client: ConsoleClient;
  now: () => number;
}

export interface RootActions {
  /**
   * Re-reads what the app shell needs: the models, whose answer also carries the node (the connection).
   * Concurrent calls share one round trip per slice. Polled on every screen.
   */
  refresh(): Promise<void>;
  /** Re-reads what the Runtime screen shows: runtime.health, runtime.routing, runtime.upstreams. Reads only (RT-6). */
  refreshRuntime(): Promise<void>;
}

export type AppState = ConnectionSlice & ModelsSlice & RuntimeSlice & RoutingSlice & RootActions;

/** A slice sees the whole store (to call other slices' actions) but owns only its own keys. */
export type SliceCreator<T> = (deps: StoreDeps) => StateCreator<AppState, [], [], T>;

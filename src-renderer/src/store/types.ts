import type { StateCreator } from 'zustand/vanilla';
import type { ConsoleClient } from '../api/console-client';
import type { BenchSlice } from './bench-slice';
import type { ClusterSlice } from './cluster-slice';
import type { ConnectionSlice } from './connection-slice';
import type { DecisionsSlice } from './decisions-slice';
import type { GuardiansSlice } from './guardians-slice';
import type { LanesSlice } from './lanes-slice';
import type { LendingSlice } from './lending-slice';
import type { LinksSlice } from './links-slice';
import type { ModelConfigsSlice } from './model-configs-slice';
import type { ModelsSlice } from './models-slice';
import type { ReplaySlice } from './replay-slice';
import type { RoutingSlice } from './routing-slice';
import type { RuntimeSlice } from './runtime-slice';
import type { SettingsSlice } from './settings-slice';
import type { TimelineSlice } from './timeline-slice';

/** What the store needs from outside; tests inject both. */
export interface StoreDeps {
  client: ConsoleClient;
  now: () => number;
  /** A pause (waiting for a restarted node); real time when not given. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Follows the node to another address after a Settings save moved it, with the save's one-time code; resolves
   * true when the page is on its way there. Absent where the page cannot follow (a remote cluster, the desktop app).
   */
  followMove?: (to: string, code: string) => Promise<boolean>;
}

export interface RootActions {
  /**
   * Re-reads what the app shell needs: the models, whose answer also carries the node (the connection).
   * Concurrent calls share one round trip per slice. Polled on every screen.
   */
  refresh(): Promise<void>;
  /**
   * Re-reads what the Models screen shows: this node's models (and the connection), and on a master the merged
   * catalog with every node's lane state.
   */
  refreshModels(): Promise<void>;
  /**
   * Re-reads what the Runtime screen shows: runtime.health (of the picked node), runtime.routing, runtime.upstreams,
   * the cluster's nodes (the node picker), engine discovery. Reads only (RT-6).
   */
  refreshRuntime(): Promise<void>;
  /** Re-reads what the Nodes screen shows: cluster nodes (and catalog), the Lending view (held requests). */
  refreshNodes(): Promise<void>;
  /**
   * Re-reads what the Lending screen shows: the Lending view, the catalog (filter pickers), and the newest page of
   * the log with the current filters, unless older pages were read (re-reading would drop them); the guardian settings.
   */
  refreshLending(): Promise<void>;
  /** Re-reads what the Links screen shows: both lanes' links, a chosen anchor's candidates, the catalog. */
  refreshLinks(): Promise<void>;
}

export type AppState = ConnectionSlice &
  ModelsSlice &
  RuntimeSlice &
  RoutingSlice &
  ClusterSlice &
  LanesSlice &
  LendingSlice &
  DecisionsSlice &
  LinksSlice &
  GuardiansSlice &
  SettingsSlice &
  BenchSlice &
  TimelineSlice &
  ReplaySlice &
  ModelConfigsSlice &
  RootActions;

/** A slice sees the whole store (to call other slices' actions) but owns only its own keys. */
export type SliceCreator<T> = (deps: StoreDeps) => StateCreator<AppState, [], [], T>;

import type { RuntimeHealth } from '../../../src-router/contract';
import type { ApiFailure } from '../api/console-client';
import type { SliceCreator } from './types';

export interface RuntimeState {
  /** The last `runtime.health` answer (RT-1), as the node gave it; null before the first good answer. */
  health: RuntimeHealth | null;
  loading: boolean;
  failure: ApiFailure | null;
  fetchedAt: number | null;
}

export interface RuntimeSlice {
  runtime: RuntimeState;
  /** The node whose blob the Runtime screen shows; null: the node that serves the console API. */
  runtimeNode: string | null;
  /** Re-reads the runtime blob. It does not ask the runtime to run its diagnostics again (RT-6). */
  fetchRuntimeHealth(): Promise<void>;
  /** Shows another node's blob: what was shown of the previous one is dropped, then the new one is read. */
  pickRuntimeNode(node: string | null): Promise<void>;
}

const isRejection = (f: ApiFailure) => f.kind === 'rejected' || f.kind === 'no-token';
const EMPTY: RuntimeState = { health: null, loading: false, failure: null, fetchedAt: null };

export const createRuntimeSlice: SliceCreator<RuntimeSlice> = (deps) => (set, get) => {
  let inFlight: { node: string | null; done: Promise<void> } | null = null;

  async function load(node: string | null): Promise<void> {
    set((s) => ({ runtime: { ...s.runtime, loading: true } }));
    const result = await deps.client.runtimeHealth(node ?? undefined);
    // The operator picked another node meanwhile: this answer is not what the screen shows.
    if (get().runtimeNode !== node) return;
    if (result.ok) {
      set({ runtime: { health: result.value, loading: false, failure: null, fetchedAt: deps.now() } });
      return;
    }
    // A rejected token hides what it used to show; a transient failure keeps the last blob read.
    set((s) => ({
      runtime: {
        ...s.runtime,
        health: isRejection(result.failure) ? null : s.runtime.health,
        loading: false,
        failure: result.failure,
      },
    }));
  }

  const fetchRuntimeHealth = () => {
    const node = get().runtimeNode;
    if (inFlight?.node === node) return inFlight.done;
    const done = load(node).finally(() => {
      if (inFlight?.done === done) inFlight = null;
    });
    inFlight = { node, done };
    return done;
  };

  return {
    runtime: EMPTY,
    runtimeNode: null,
    fetchRuntimeHealth,
    pickRuntimeNode: (node) => {
      if (get().runtimeNode === node) return fetchRuntimeHealth();
      set({ runtimeNode: node, runtime: EMPTY });
      return fetchRuntimeHealth();
    },
  };
};

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
  /** Re-reads the runtime blob. It does not ask the runtime to run its diagnostics again (RT-6). */
  fetchRuntimeHealth(): Promise<void>;
}

const isRejection = (f: ApiFailure) => f.kind === 'rejected' || f.kind === 'no-token';

export const createRuntimeSlice: SliceCreator<RuntimeSlice> = (deps) => (set) => {
  let inFlight: Promise<void> | null = null;

  async function load(): Promise<void> {
    set((s) => ({ runtime: { ...s.runtime, loading: true } }));
    const result = await deps.client.runtimeHealth();
    if (result.ok) {
      set({ runtime: { health: result.value, loading: false, failure: null, fetchedAt: deps.now() } });
      return;
    }
    // A rejected token hides what it used to show; a transient failure keeps the last blob read.
    set((s) => ({ runtime: { ...s.runtime, health: isRejection(result.failure) ? null : s.runtime.health, loading: false, failure: result.failure } }));
  }

  return {
    runtime: { health: null, loading: false, failure: null, fetchedAt: null },
    fetchRuntimeHealth: () => {
      inFlight ??= load().finally(() => {
        inFlight = null;
      });
      return inFlight;
    },
  };
};

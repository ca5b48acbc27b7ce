import type { BenchRunWire } from '../../../src-router/contract';
import type { ApiFailure } from '../api/console-client';
import type { SliceCreator } from './types';

export interface BenchState {
  /** Runs kept in the node's store (ASSET-1), newest first; null before the first good answer. */
  runs: BenchRunWire[] | null;
  loading: boolean;
  failure: ApiFailure | null;
  fetchedAt: number | null;
}

export interface BenchSlice {
  bench: BenchState;
  fetchBenchRuns(): Promise<void>;
}

export const createBenchSlice: SliceCreator<BenchSlice> = (deps) => (set) => {
  let inFlight: Promise<void> | null = null;

  async function load(): Promise<void> {
    set((s) => ({ bench: { ...s.bench, loading: true } }));
    const result = await deps.client.benchRuns();
    if (result.ok) set({ bench: { runs: result.value.runs, loading: false, failure: null, fetchedAt: deps.now() } });
    else set((s) => ({ bench: { ...s.bench, loading: false, failure: result.failure } }));
  }

  return {
    bench: { runs: null, loading: false, failure: null, fetchedAt: null },
    fetchBenchRuns: () => {
      inFlight ??= load().finally(() => {
        inFlight = null;
      });
      return inFlight;
    },
  };
};

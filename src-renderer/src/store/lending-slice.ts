import type { LendingViewWire } from '../../../src-router/contract';
import type { ApiFailure } from '../api/console-client';
import type { SliceCreator } from './types';

export interface LendingState {
  /** `GET /router/v1/console/lending` as last read (UI-1, UI-2); null before the first good answer. */
  view: LendingViewWire | null;
  loading: boolean;
  failure: ApiFailure | null;
  fetchedAt: number | null;
}

export interface LendingSlice {
  lending: LendingState;
  /** Re-reads leases, settings, node builds and held requests (concurrent calls share one round trip). */
  fetchLending(): Promise<void>;
}

const isRejection = (f: ApiFailure) => f.kind === 'rejected' || f.kind === 'no-token';

export const createLendingSlice: SliceCreator<LendingSlice> = (deps) => (set) => {
  let inFlight: Promise<void> | null = null;

  async function load(): Promise<void> {
    set((s) => ({ lending: { ...s.lending, loading: true } }));
    const result = await deps.client.lending();
    if (result.ok) {
      set({ lending: { view: result.value, loading: false, failure: null, fetchedAt: deps.now() } });
      return;
    }
    set((s) => ({
      lending: {
        ...s.lending,
        view: isRejection(result.failure) ? null : s.lending.view,
        loading: false,
        failure: result.failure,
      },
    }));
  }

  return {
    lending: { view: null, loading: false, failure: null, fetchedAt: null },
    fetchLending: () => {
      inFlight ??= load().finally(() => {
        inFlight = null;
      });
      return inFlight;
    },
  };
};

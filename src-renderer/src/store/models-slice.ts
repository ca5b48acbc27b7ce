import type { ConsoleModel } from '../../../src-router/contract';
import type { ApiFailure } from '../api/console-client';
import type { SliceCreator } from './types';

export interface ModelsState {
  /** The node's models as last read; null before the first good answer. */
  items: ConsoleModel[] | null;
  loading: boolean;
  failure: ApiFailure | null;
  fetchedAt: number | null;
}

export interface ModelsSlice {
  models: ModelsState;
  fetchModels(): Promise<void>;
}

export const createModelsSlice: SliceCreator<ModelsSlice> = (deps) => (set, get) => {
  let inFlight: Promise<void> | null = null;

  async function load(): Promise<void> {
    set((s) => ({ models: { ...s.models, loading: true } }));
    const result = await deps.client.listModels();
    if (result.ok) {
      get().connectionSucceeded(result.value.node);
      set({ models: { items: result.value.models, loading: false, failure: null, fetchedAt: deps.now() } });
      return;
    }
    get().connectionFailed(result.failure);
    // A rejected token hides what it used to show; a transient failure keeps the last known list.
    const keep = result.failure.kind !== 'rejected' && result.failure.kind !== 'no-token';
    set((s) => ({
      models: { ...s.models, items: keep ? s.models.items : null, loading: false, failure: result.failure },
    }));
  }

  return {
    models: { items: null, loading: false, failure: null, fetchedAt: null },
    fetchModels: () => {
      inFlight ??= load().finally(() => {
        inFlight = null;
      });
      return inFlight;
    },
  };
};

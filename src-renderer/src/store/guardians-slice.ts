import type { GuardianDelete, GuardianPut, GuardianSetting, GuardiansView } from '../../../src-router/contract';
import type { ApiFailure, ApiResult } from '../api/console-client';
import type { SliceCreator } from './types';

export interface GuardiansState {
  /** `GET /router/v1/site/guardians` as last read (UI-4); null before the first good answer. */
  view: GuardiansView | null;
  loading: boolean;
  failure: ApiFailure | null;
  fetchedAt: number | null;
  /** A set or remove is in flight. */
  writing: boolean;
}

export interface GuardiansSlice {
  guardians: GuardiansState;
  /** Re-reads the guardian settings (concurrent calls share one round trip). */
  fetchGuardians(): Promise<void>;
  /** Writes return the node's answer as is (a 400 with the field it named included); the settings are read again after. */
  setGuardian(body: GuardianPut): Promise<ApiResult<GuardianSetting>>;
  removeGuardian(body: GuardianDelete): Promise<ApiResult<null>>;
}

const isRejection = (f: ApiFailure) => f.kind === 'rejected' || f.kind === 'no-token';

export const createGuardiansSlice: SliceCreator<GuardiansSlice> = (deps) => (set) => {
  const patch = (p: (g: GuardiansState) => Partial<GuardiansState>) =>
    set((s) => ({ guardians: { ...s.guardians, ...p(s.guardians) } }));

  async function load(): Promise<void> {
    patch(() => ({ loading: true }));
    const result = await deps.client.guardians();
    if (result.ok) patch(() => ({ view: result.value, loading: false, failure: null, fetchedAt: deps.now() }));
    else patch((g) => ({ view: isRejection(result.failure) ? null : g.view, loading: false, failure: result.failure }));
  }

  let inFlight: Promise<void> | null = null;
  const fetchGuardians = () => {
    inFlight ??= load().finally(() => {
      inFlight = null;
    });
    return inFlight;
  };

  async function write<T>(run: () => Promise<ApiResult<T>>): Promise<ApiResult<T>> {
    patch(() => ({ writing: true }));
    try {
      const result = await run();
      // A read in flight started before the write: read what the node holds now.
      if (inFlight) await inFlight;
      await fetchGuardians();
      return result;
    } finally {
      patch(() => ({ writing: false }));
    }
  }

  return {
    guardians: { view: null, loading: false, failure: null, fetchedAt: null, writing: false },
    fetchGuardians,
    setGuardian: (body) => write(() => deps.client.putGuardian(body)),
    removeGuardian: (body) => write(() => deps.client.deleteGuardian(body)),
  };
};

import type {
  RoutingViewWire,
  SetRoutingAnswer,
  SetRoutingRequest,
  UpstreamRowWire,
} from '../../../src-router/contract';
import type { ApiFailure, ApiResult } from '../api/console-client';
import type { SliceCreator } from './types';

export interface RoutingState {
  /** The last `runtime.routing` answer (ROUTE-1, 6, 8); null before the first good answer. */
  view: RoutingViewWire | null;
  /** The last `runtime.upstreams` rows (ROUTE-9); null before the first good answer. */
  upstreams: UpstreamRowWire[] | null;
  loading: boolean;
  failure: ApiFailure | null;
  upstreamsFailure: ApiFailure | null;
  fetchedAt: number | null;
  /** A `runtime.setRouting` is in flight. */
  applying: boolean;
}

export interface RoutingSlice {
  routing: RoutingState;
  /** Re-reads routing state and routed upstreams (concurrent calls share one round trip). */
  fetchRouting(): Promise<void>;
  /**
   * Publishes desired state, then re-reads routing state. The node's answer is returned as is: a 400 carries the
   * exact ROUTE-3 message and the field; a gate's 403 is `refused`. The slice keeps only what the node holds.
   */
  applyRouting(input: SetRoutingRequest): Promise<ApiResult<SetRoutingAnswer>>;
}

const isRejection = (f: ApiFailure) => f.kind === 'rejected' || f.kind === 'no-token';

export const createRoutingSlice: SliceCreator<RoutingSlice> = (deps) => (set, get) => {
  let inFlight: Promise<void> | null = null;

  async function load(): Promise<void> {
    set((s) => ({ routing: { ...s.routing, loading: true } }));
    const [view, upstreams] = await Promise.all([deps.client.runtimeRouting(), deps.client.runtimeUpstreams()]);
    set((s) => {
      const r = s.routing;
      const next = { ...r, loading: false };
      if (view.ok) Object.assign(next, { view: view.value, failure: null, fetchedAt: deps.now() });
      else Object.assign(next, { view: isRejection(view.failure) ? null : r.view, failure: view.failure });
      if (upstreams.ok) Object.assign(next, { upstreams: upstreams.value.upstreams, upstreamsFailure: null });
      else
        Object.assign(next, {
          upstreams: isRejection(upstreams.failure) ? null : r.upstreams,
          upstreamsFailure: upstreams.failure,
        });
      return { routing: next };
    });
  }

  const fetchRouting = () => {
    inFlight ??= load().finally(() => {
      inFlight = null;
    });
    return inFlight;
  };

  return {
    routing: {
      view: null,
      upstreams: null,
      loading: false,
      failure: null,
      upstreamsFailure: null,
      fetchedAt: null,
      applying: false,
    },
    fetchRouting,
    applyRouting: async (input) => {
      set((s) => ({ routing: { ...s.routing, applying: true } }));
      try {
        const result = await deps.client.setRouting(input);
        // Desired state changed (or a gate answered): read what the node holds now. A read already in flight
        // started before the write, so wait for it and read again.
        if (inFlight) await inFlight;
        await get().fetchRouting();
        return result;
      } finally {
        set((s) => ({ routing: { ...s.routing, applying: false } }));
      }
    },
  };
};

import type { DecisionRowWire } from '../../../src-router/contract';
import type { ApiFailure, ApiResult, DownloadedFile, ExportFormat } from '../api/console-client';
import type { SliceCreator } from './types';

export interface DecisionsState {
  /** Every page read so far for `query`, newest first (the gathered log, UI-1); null before the first good answer. */
  rows: DecisionRowWire[] | null;
  /** The cursor of the next older page; null when the log has no more. */
  nextCursor: string | null;
  /** The filters the rows were read with (a query string, lending/decision-filters.ts). */
  query: string;
  pages: number;
  loading: boolean;
  loadingOlder: boolean;
  failure: ApiFailure | null;
  fetchedAt: number | null;
  exporting: boolean;
}

export interface DecisionsSlice {
  decisions: DecisionsState;
  /** Reads the newest page for `query` (default: the current filters) and drops older pages read before. */
  loadDecisions(query?: string): Promise<void>;
  /** Reads the next older page with the cursor and appends it. */
  loadOlderDecisions(): Promise<void>;
  /** The log filtered as shown, as a file (UI-6); nothing is kept in the store. */
  exportDecisions(format: ExportFormat): Promise<ApiResult<DownloadedFile>>;
}

const isRejection = (f: ApiFailure) => f.kind === 'rejected' || f.kind === 'no-token';

export const createDecisionsSlice: SliceCreator<DecisionsSlice> = (deps) => (set, get) => {
  // Each newest-page read starts a generation: an answer (first page or older) of an earlier one is dropped.
  let generation = 0;

  return {
    decisions: {
      rows: null,
      nextCursor: null,
      query: '',
      pages: 0,
      loading: false,
      loadingOlder: false,
      failure: null,
      fetchedAt: null,
      exporting: false,
    },

    loadDecisions: async (query) => {
      const q = query ?? get().decisions.query;
      const mine = ++generation;
      const sameQuery = q === get().decisions.query;
      set((s) => ({
        decisions: {
          ...s.decisions,
          query: q,
          loading: true,
          loadingOlder: false,
          ...(sameQuery ? {} : { rows: null, nextCursor: null, pages: 0 }),
        },
      }));
      const result = await deps.client.decisions(q, null);
      if (mine !== generation) return;
      if (result.ok) {
        set((s) => ({
          decisions: {
            ...s.decisions,
            rows: result.value.rows,
            nextCursor: result.value.nextCursor,
            pages: 1,
            loading: false,
            failure: null,
            fetchedAt: deps.now(),
          },
        }));
        return;
      }
      set((s) => ({
        decisions: {
          ...s.decisions,
          rows: isRejection(result.failure) ? null : s.decisions.rows,
          loading: false,
          failure: result.failure,
        },
      }));
    },

    loadOlderDecisions: async () => {
      const d = get().decisions;
      if (!d.nextCursor || d.loadingOlder || d.loading) return;
      const mine = generation;
      set((s) => ({ decisions: { ...s.decisions, loadingOlder: true } }));
      const result = await deps.client.decisions(d.query, d.nextCursor);
      if (mine !== generation) return;
      if (result.ok) {
        set((s) => ({
          decisions: {
            ...s.decisions,
            rows: [...(s.decisions.rows ?? []), ...result.value.rows],
            nextCursor: result.value.nextCursor,
            pages: s.decisions.pages + 1,
            loadingOlder: false,
            failure: null,
          },
        }));
        return;
      }
      set((s) => ({ decisions: { ...s.decisions, loadingOlder: false, failure: result.failure } }));
    },

    exportDecisions: async (format) => {
      set((s) => ({ decisions: { ...s.decisions, exporting: true } }));
      try {
        return await deps.client.exportDecisions(format, get().decisions.query);
      } finally {
        set((s) => ({ decisions: { ...s.decisions, exporting: false } }));
      }
    },
  };
};

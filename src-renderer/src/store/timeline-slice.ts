import type { DecisionRowWire, TimelinePageWire } from '../../../src-router/contract';
import type { ApiFailure } from '../api/console-client';
import { TIMELINE_DECISION_EVENTS } from '../lending/timeline-events';
import type { SliceCreator } from './types';

/** The ranges the timeline offers (the last N minutes); the first is the default. */
export const TIMELINE_RANGES_MS = [5 * 60_000, 15 * 60_000, 60 * 60_000] as const;

/** `5 min`, `1 h`: a range as the picker names it. */
export const rangeLabel = (ms: number): string =>
  ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${Math.round(ms / 60_000)} min`;
/** Decision rows per page, and pages at most (the lending rows of a busy hour fit). */
export const TIMELINE_DECISION_PAGE = 1000;
export const TIMELINE_DECISION_PAGES = 5;
/** Request and load rows per node and table, at most (the newest are kept). */
export const TIMELINE_ROW_LIMIT = 10_000;

export interface TimelineState {
  /** Every node's request and load rows for the range; null before the first good answer. */
  page: TimelinePageWire | null;
  /** The lending rows of the decision log in the same range, newest first. */
  decisions: DecisionRowWire[];
  /** Whether the log had more lending rows than were read. */
  decisionsCut: boolean;
  rangeMs: number;
  loading: boolean;
  failure: ApiFailure | null;
  fetchedAt: number | null;
}

export interface TimelineSlice {
  timeline: TimelineState;
  /** Reads the last `rangeMs` (default: the current range): the analytics and the decision log's lending rows. */
  loadTimeline(rangeMs?: number): Promise<void>;
}

/** The lease timeline (Lending tab): mirrors GET /router/v1/console/timeline and the lending rows of the log. */
export const createTimelineSlice: SliceCreator<TimelineSlice> = (deps) => (set, get) => {
  let generation = 0;

  return {
    timeline: {
      page: null,
      decisions: [],
      decisionsCut: false,
      rangeMs: TIMELINE_RANGES_MS[0],
      loading: false,
      failure: null,
      fetchedAt: null,
    },

    loadTimeline: async (rangeMs) => {
      const range = rangeMs ?? get().timeline.rangeMs;
      const mine = ++generation;
      set((s) => ({ timeline: { ...s.timeline, rangeMs: range, loading: true } }));
      const to = deps.now();
      const from = to - range;
      const query = new URLSearchParams({
        from: String(from),
        to: String(to),
        event: TIMELINE_DECISION_EVENTS.join(','),
        limit: String(TIMELINE_DECISION_PAGE),
      }).toString();
      const readDecisions = async () => {
        const rows: DecisionRowWire[] = [];
        let cursor: string | null = null;
        for (let i = 0; i < TIMELINE_DECISION_PAGES; i++) {
          const r = await deps.client.decisions(query, cursor);
          if (!r.ok) return r;
          rows.push(...r.value.rows);
          cursor = r.value.nextCursor;
          if (!cursor) break;
        }
        return { ok: true as const, value: { rows, cut: cursor !== null } };
      };
      const [page, decisions] = await Promise.all([
        deps.client.timeline(from, to, TIMELINE_ROW_LIMIT),
        readDecisions(),
      ]);
      if (mine !== generation) return;
      if (page.ok && decisions.ok) {
        set({
          timeline: {
            page: page.value,
            decisions: decisions.value.rows,
            decisionsCut: decisions.value.cut,
            rangeMs: range,
            loading: false,
            failure: null,
            fetchedAt: deps.now(),
          },
        });
        return;
      }
      const failure = !page.ok ? page.failure : !decisions.ok ? decisions.failure : null;
      set((s) => ({ timeline: { ...s.timeline, loading: false, failure } }));
    },
  };
};

import type { ClusterModel, LendingNodeWire } from '../../../src-router/contract';

/**
 * The decision log's filters (UI-1, UI-6), pure: the form's draft → the query string the console API and the export
 * take (`from`, `to` as unix ms; `node`, `model`, `kind`, `event`, `outcome`, `reason`). The draft is UI state; the
 * query string is what the decisions slice reads with. Tested in renderer-lending-filters.test.ts.
 */

export const TIME_RANGES = [
  { id: 'all', label: 'any time', ms: null },
  { id: '15m', label: 'last 15 minutes', ms: 15 * 60_000 },
  { id: '1h', label: 'last hour', ms: 60 * 60_000 },
  { id: '24h', label: 'last 24 hours', ms: 24 * 60 * 60_000 },
  { id: 'custom', label: 'between…', ms: null },
] as const;
export type TimeRangeId = (typeof TIME_RANGES)[number]['id'];

export interface DecisionFilterDraft {
  range: TimeRangeId;
  /** `custom` only: `datetime-local` values (`2025-01-02T14:03`), local time; empty = open. */
  from: string;
  to: string;
  node: string;
  model: string;
  kind: string;
  event: string;
  outcome: string;
  reason: string;
}

export const EMPTY_FILTER: DecisionFilterDraft = {
  range: 'all',
  from: '',
  to: '',
  node: '',
  model: '',
  kind: '',
  event: '',
  outcome: '',
  reason: '',
};

export const KINDS = ['plan', 'dispatch', 'helper'] as const;
export const OUTCOMES = ['granted', 'probe', 'skipped'] as const;

/** LOG-2..4: the events each kind writes (a plan row's event is its outcome). */
export const EVENTS_BY_KIND: Record<(typeof KINDS)[number], readonly string[]> = {
  plan: OUTCOMES,
  dispatch: [
    'lease_updated',
    'lease_cleared',
    'lease_refused',
    'lent',
    'returned',
    'held_for_helper',
    'relay_refused',
    'lent_fate',
    'guardian_routed',
  ],
  helper: ['native_waited_behind_borrowed', 'borrowed_returned'],
};

/** The reasons the log writes (LOG-2 skips and probes, LLM-1 ineligible ends; refusals, returns and clears; GUARD-2 guardian routes), for the reason picker. */
export const REASONS = [
  'owner_unpriced',
  'switch_unpriced',
  'service_unpriced',
  'cost_rejected',
  'outranked',
  'helper_not_accepting',
  'helper_claimed',
  'load_forbidden',
  'context_too_small',
  'restore_unpriced',
  'helper_recently_busy',
  'owner_ineligible',
  'helper_ineligible',
  'no_live_lease',
  'helper_unreachable',
  'forward_failed',
  'not_an_owner',
  'no_lease',
  'ttl_expired',
  'busy_on_arrival',
  'own_work_arrived',
  'no_link',
  'cut_off',
  'helper_stalled',
  'withdrawn',
  'detected',
  'engine_refused',
] as const;

export type FilterField = 'from' | 'to';
export type QueryPlan = { ok: true; query: string } | { ok: false; message: string; field: FilterField };

/** A `datetime-local` value as unix ms (local time), null when empty, NaN when unreadable. */
export function localTimeMs(value: string): number | null {
  const v = value.trim();
  if (!v) return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(v);
  if (!m) return Number.NaN;
  const [, y, mo, d, h, mi, s] = m.map(Number);
  const date = new Date(y, mo - 1, d, h, mi, Number.isNaN(s) ? 0 : s);
  return date.getMonth() === mo - 1 && date.getDate() === d ? date.getTime() : Number.NaN;
}

/**
 * The query string for a draft at `now`: a relative range is `from = now - range`, fixed when applied (the screen's
 * refresh re-reads the same window; Apply again to move it); a custom range is checked
 * (readable, from before to). Only the filters set are in it, in a fixed order; `event` and `outcome` are
 * dropped when they cannot belong to the chosen kind.
 */
export function decisionQuery(f: DecisionFilterDraft, now: number): QueryPlan {
  const q = new URLSearchParams();
  const range = TIME_RANGES.find((r) => r.id === f.range) ?? TIME_RANGES[0];
  if (range.id === 'custom') {
    const from = localTimeMs(f.from);
    const to = localTimeMs(f.to);
    if (from !== null && Number.isNaN(from))
      return { ok: false, message: 'The start of the range is not a date and time.', field: 'from' };
    if (to !== null && Number.isNaN(to))
      return { ok: false, message: 'The end of the range is not a date and time.', field: 'to' };
    if (from !== null && to !== null && from >= to)
      return { ok: false, message: 'The range must start before it ends.', field: 'to' };
    if (from !== null) q.set('from', String(from));
    if (to !== null) q.set('to', String(to));
  } else if (range.ms !== null) {
    q.set('from', String(now - range.ms));
  }
  const kind = (KINDS as readonly string[]).includes(f.kind) ? (f.kind as (typeof KINDS)[number]) : null;
  const set = (key: string, value: string) => {
    if (value.trim()) q.set(key, value.trim());
  };
  set('node', f.node);
  set('model', f.model);
  if (kind) q.set('kind', kind);
  if (!kind || EVENTS_BY_KIND[kind].includes(f.event)) set('event', f.event);
  if (!kind || kind === 'plan') set('outcome', f.outcome);
  set('reason', f.reason);
  return { ok: true, query: q.toString() };
}

/** The events to offer for a kind (every event with none chosen). */
export const eventOptions = (kind: string): readonly string[] =>
  (KINDS as readonly string[]).includes(kind)
    ? EVENTS_BY_KIND[kind as (typeof KINDS)[number]]
    : Object.values(EVENTS_BY_KIND).flat();

/** The node picker: the nodes the Lending view lists. */
export const nodeOptions = (nodes: readonly Pick<LendingNodeWire, 'nodeId'>[] | null | undefined): string[] =>
  (nodes ?? []).map((n) => n.nodeId);

/** The model picker: local IDs (what the log's owner and helper columns hold), each once, sorted. */
export function modelOptions(models: readonly ClusterModel[] | null | undefined): string[] {
  const ids = new Set<string>();
  for (const m of models ?? []) for (const r of m.replicas) ids.add(r.localId);
  return [...ids].sort();
}

/** How many filters are set (the time range counts as one). */
export function activeFilterCount(f: DecisionFilterDraft): number {
  const time = f.range === 'custom' ? (f.from.trim() || f.to.trim() ? 1 : 0) : f.range === 'all' ? 0 : 1;
  return time + [f.node, f.model, f.kind, f.event, f.outcome, f.reason].filter((v) => v.trim() !== '').length;
}

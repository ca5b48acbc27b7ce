/**
 * One row of the decision log (LOG-1..4): the `offload_decisions` table's columns in camelCase, and the mapping
 * between the two. Pure: no IO. The lending vocabulary (PlanRow, ModelRef) lives below this module, so the unions
 * here are the log's own; `lending/decision-rows.ts` builds rows from lending values.
 */

export type DecisionKind = 'plan' | 'dispatch' | 'helper';
export type PlanOutcome = 'granted' | 'probe' | 'skipped';
export type DispatchEvent =
  | 'lease_updated'
  | 'lease_cleared'
  | 'lease_refused'
  | 'lent'
  | 'returned'
  | 'held_for_helper'
  | 'relay_refused'
  | 'lent_fate'
  | 'guardian_routed';
export type HelperEvent = 'native_waited_behind_borrowed' | 'borrowed_returned';
/** A plan row's event is its outcome; dispatch and helper rows name what happened. */
export type DecisionEvent = PlanOutcome | DispatchEvent | HelperEvent;
export type DecisionTrigger = 'enqueued' | 'completed' | 'borrowed_completed' | 'probe_due' | 'tick';
export type ServiceSource = 'helper' | 'owner_fallback';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** Anything else worth keeping about a decision; stored as JSON text in `details`. */
export type DecisionDetails = { [key: string]: JsonValue };

/** A stored decision. `id` is per node: rows gathered from several nodes are told apart by (nodeId, id). */
export interface DecisionRow {
  id: number;
  /** Unix ms on the writing node's clock. */
  at: number;
  /** The node that wrote the row (stamped by the writer). */
  nodeId: string;
  /** The router version that wrote the row (stamped by the writer, LOG-1). */
  routerVersion: string;
  kind: DecisionKind;
  event: DecisionEvent;
  trigger: DecisionTrigger | null;
  linkId: string | null;
  ownerNode: string | null;
  ownerModel: string | null;
  helperNode: string | null;
  helperModel: string | null;
  held: number | null;
  backlog: number | null;
  ownerDrainMs: number | null;
  helperSwitchMs: number | null;
  helperServiceMs: number | null;
  serviceSource: ServiceSource | null;
  helperIdleMs: number | null;
  /** Plan rows only. */
  outcome: PlanOutcome | null;
  /** Skip/probe reason, relay_refused, lent_fate, lease_refused, lease_cleared, returned and borrowed_returned reasons. */
  reason: string | null;
  slots: number | null;
  requestsOut: number | null;
  /** held_for_helper: when the owner would finish the held request, in ms from `at`. */
  ownerPredictedFinishMs: number | null;
  ownerJobMs: number | null;
  helperJobMs: number | null;
  waitedMs: number | null;
  borrowedInBackend: number | null;
  requestId: string | null;
  details: DecisionDetails | null;
}

/** What the lending plumbing hands the writer: the writer assigns id and stamps nodeId and routerVersion. */
export type DecisionInput = Omit<DecisionRow, 'id' | 'nodeId' | 'routerVersion'>;

/**
 * A looser input accepted by `DecisionLogWriter.add` (it satisfies lending's `DecisionSink`): missing columns are
 * null, `details` may already be JSON text.
 */
export type DecisionDraft = Pick<DecisionInput, 'at' | 'kind' | 'event'> &
  Partial<Omit<DecisionInput, 'at' | 'kind' | 'event' | 'details'>> & { details?: DecisionDetails | string | null };

/** camelCase field → column, in table order (CSV exports use this order). */
export const DECISION_COLUMNS = {
  id: 'id',
  at: 'at',
  nodeId: 'node_id',
  routerVersion: 'router_version',
  kind: 'kind',
  event: 'event',
  trigger: 'trigger',
  linkId: 'link_id',
  ownerNode: 'owner_node',
  ownerModel: 'owner_model',
  helperNode: 'helper_node',
  helperModel: 'helper_model',
  held: 'held',
  backlog: 'backlog',
  ownerDrainMs: 'owner_drain_ms',
  helperSwitchMs: 'helper_switch_ms',
  helperServiceMs: 'helper_service_ms',
  serviceSource: 'service_source',
  helperIdleMs: 'helper_idle_ms',
  outcome: 'outcome',
  reason: 'reason',
  slots: 'slots',
  requestsOut: 'requests_out',
  ownerPredictedFinishMs: 'owner_predicted_finish_ms',
  ownerJobMs: 'owner_job_ms',
  helperJobMs: 'helper_job_ms',
  waitedMs: 'waited_ms',
  borrowedInBackend: 'borrowed_in_backend',
  requestId: 'request_id',
  details: 'details',
} as const satisfies { [K in keyof DecisionRow]-?: string };

export type DecisionField = keyof typeof DECISION_COLUMNS;
export const DECISION_FIELDS = Object.keys(DECISION_COLUMNS) as DecisionField[];

/** Fields holding durations: rounded to whole ms when stored. */
const MS_FIELDS = new Set<DecisionField>([
  'ownerDrainMs',
  'helperSwitchMs',
  'helperServiceMs',
  'helperIdleMs',
  'ownerPredictedFinishMs',
  'ownerJobMs',
  'helperJobMs',
  'waitedMs',
]);

export type SqlValue = string | number | null;
/** A row as SQLite stores it: column name → value. */
export type DecisionDbRow = { [C in (typeof DECISION_COLUMNS)[DecisionField]]: SqlValue };

const FIELD_SET = new Set<string>(DECISION_FIELDS);

/**
 * Every column of an input, missing ones null; `details` normalised to an object (JSON text parsed). Keys that are
 * not columns (possible through lending's untyped DecisionSink) are kept in `details`; id, nodeId and routerVersion
 * are the writer's and ignored.
 */
export function completeDecision(d: DecisionDraft): DecisionInput {
  const src = d as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of DECISION_FIELDS) if (f !== 'id' && f !== 'nodeId' && f !== 'routerVersion') out[f] = src[f] ?? null;
  let details = typeof d.details === 'string' ? parseDetails(d.details) : (d.details ?? null);
  for (const [k, v] of Object.entries(src)) {
    if (FIELD_SET.has(k) || v === undefined || typeof v === 'function') continue;
    details = { ...details, [k]: v as JsonValue };
  }
  out.details = details;
  return out as unknown as DecisionInput;
}

/** Named parameters for the INSERT (`@node_id`, …; `id` left to SQLite). */
export function toDbParams(row: DecisionInput, nodeId: string, routerVersion: string): Omit<DecisionDbRow, 'id'> {
  const src: Record<string, unknown> = { ...row, nodeId, routerVersion };
  const out: Record<string, SqlValue> = {};
  for (const f of DECISION_FIELDS) {
    if (f === 'id') continue;
    const v = src[f];
    if (v === undefined || v === null) out[DECISION_COLUMNS[f]] = null;
    else if (f === 'details') out.details = JSON.stringify(v);
    else if (MS_FIELDS.has(f) && typeof v === 'number')
      out[DECISION_COLUMNS[f]] = Number.isFinite(v) ? Math.round(v) : null;
    else if (typeof v === 'number' || typeof v === 'string') out[DECISION_COLUMNS[f]] = v;
    else if (typeof v === 'boolean') out[DECISION_COLUMNS[f]] = v ? 1 : 0;
    else out[DECISION_COLUMNS[f]] = String(v);
  }
  return out as Omit<DecisionDbRow, 'id'>;
}

/** A row read from SQLite (column names) as a DecisionRow. */
export function fromDbRow(r: Record<string, unknown>): DecisionRow {
  const out: Record<string, unknown> = {};
  for (const f of DECISION_FIELDS) out[f] = r[DECISION_COLUMNS[f]] ?? null;
  out.details = typeof r.details === 'string' ? parseDetails(r.details) : null;
  return out as unknown as DecisionRow;
}

function parseDetails(text: string): DecisionDetails | null {
  if (text === '') return null;
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? (v as DecisionDetails)
      : { value: v as JsonValue };
  } catch {
    return { text };
  }
}

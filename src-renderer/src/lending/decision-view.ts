import { type DecisionRowWire, decisionRowSchema } from '../../../src-router/contract';
import { DASH, formatClockMs, formatDateTimeMs, formatMillis, formatModelRef, type PillTone } from '../format';
import type { FoldedDecision } from './decision-fold';

/**
 * What one line of the decision log shows (UI-1, LOG-2..4), pure: a folded run as one line with its count and time
 * span, a short summary per kind of decision, and on expand every variable of the decision under its column name
 * (the CSV header's), `—` for a column the row leaves empty. Tested in renderer-lending-view.test.ts.
 */

/** The row's fields in table order (the contract's schema is written in the router's column order). */
export const DECISION_FIELDS = Object.keys(decisionRowSchema.shape) as (keyof DecisionRowWire)[];

/** `ownerDrainMs` → `owner_drain_ms`: the column name, as the table and the CSV export name it. */
export const columnName = (field: string): string => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

const MS_FIELDS = new Set<string>([
  'ownerDrainMs',
  'helperSwitchMs',
  'helperServiceMs',
  'helperIdleMs',
  'ownerPredictedFinishMs',
  'ownerJobMs',
  'helperJobMs',
  'waitedMs',
]);

const EVENT_TONE: Record<string, PillTone> = {
  granted: 'ok',
  probe: 'busy',
  skipped: 'idle',
  lease_updated: 'ok',
  lease_cleared: 'idle',
  lease_refused: 'bad',
  lent: 'ok',
  returned: 'busy',
  held_for_helper: 'busy',
  relay_refused: 'bad',
  lent_fate: 'busy',
  native_waited_behind_borrowed: 'busy',
  borrowed_returned: 'busy',
  guardian_routed: 'ok',
};

export const eventTone = (event: string): PillTone => EVENT_TONE[event] ?? 'idle';

export interface DecisionVariable {
  /** Column name (`owner_drain_ms`), or `details.<key>` for what the row keeps in `details`. */
  name: string;
  value: string;
  /** The raw value when the display rounds or adds a unit, for a tooltip. */
  raw: string | null;
  empty: boolean;
}

type Unit = 'time' | 'ms' | 'plain';

/** `at` and `details` keys ending in `At` are times (unix ms); the duration columns and keys ending in `Ms` are milliseconds. */
const unitOf = (name: string): Unit =>
  name === 'at' || /At$/.test(name) ? 'time' : MS_FIELDS.has(name) || /Ms$/.test(name) ? 'ms' : 'plain';

function displayValue(unit: Unit, v: unknown): { value: string; raw: string | null } {
  if (v === null || v === undefined || v === '') return { value: DASH, raw: null };
  if (unit === 'time' && typeof v === 'number') return { value: formatDateTimeMs(v), raw: String(v) };
  if (unit === 'ms' && typeof v === 'number') return { value: formatMillis(v), raw: String(v) };
  if (typeof v === 'object') return { value: JSON.stringify(v), raw: null };
  return { value: String(v), raw: null };
}

/** Every variable of a decision: each column in table order, then each key of `details`. */
export function decisionVariables(row: DecisionRowWire): DecisionVariable[] {
  const out: DecisionVariable[] = [];
  for (const f of DECISION_FIELDS) {
    if (f === 'details') continue;
    const v = row[f];
    out.push({ name: columnName(f), ...displayValue(unitOf(f), v), empty: v === null || v === '' });
  }
  const details = row.details ?? {};
  const keys = Object.keys(details);
  if (keys.length === 0) out.push({ name: 'details', value: DASH, raw: null, empty: true });
  for (const k of keys.sort()) {
    const v = details[k];
    out.push({ name: `details.${k}`, ...displayValue(unitOf(k), v), empty: v === null });
  }
  return out;
}

const part = (label: string, v: string | number | null | undefined) =>
  v === null || v === undefined || v === DASH ? null : `${label} ${v}`;
const ms = (v: number | null) => (v === null ? null : formatMillis(v));

/** The few numbers that say what a decision was about, by kind and event (the rest is on expand). */
export function decisionSummary(r: DecisionRowWire): string {
  const parts: (string | null)[] = [];
  if (r.kind === 'plan') {
    parts.push(
      part('trigger', r.trigger),
      part('held', r.held),
      part('backlog', r.backlog),
      part('drain', ms(r.ownerDrainMs)),
    );
    parts.push(part('switch', ms(r.helperSwitchMs)));
    parts.push(
      r.helperServiceMs === null
        ? null
        : `service ${formatMillis(r.helperServiceMs)}${r.serviceSource ? ` (${r.serviceSource})` : ''}`,
    );
    parts.push(part('idle', ms(r.helperIdleMs)));
  } else if (r.event === 'held_for_helper') {
    parts.push(
      part('owner finish', ms(r.ownerPredictedFinishMs)),
      part('owner/job', ms(r.ownerJobMs)),
      part('helper/job', ms(r.helperJobMs)),
      part('waited', ms(r.waitedMs)),
    );
  } else if (r.event === 'guardian_routed') {
    parts.push(
      part('guardian', r.helperModel ? `${r.helperModel} on ${r.helperNode}` : null),
      part('setting', typeof r.details?.from === 'string' ? r.details.from : null),
    );
  } else if (r.kind === 'helper') {
    parts.push(part('borrowed in backend', r.borrowedInBackend), part('waited', ms(r.waitedMs)));
  } else {
    parts.push(part('out', r.requestsOut));
  }
  if (r.requestId) parts.push(`request ${r.requestId.slice(0, 8)}`);
  return parts.filter((p): p is string => p !== null).join(' · ') || DASH;
}

export interface DecisionLineView {
  /** Stable enough for React and for keeping a line open: the writing node and the newest row's id. */
  key: string;
  count: number;
  /** `×8` for a folded run, empty for a single row. */
  countLabel: string;
  /** When the newest row of the run was written (clock with ms) and the full date for a tooltip. */
  at: string;
  atTitle: string;
  /** `first – last (span)` for a folded run, null for a single row. */
  span: string | null;
  node: string;
  version: string;
  kind: string;
  event: string;
  tone: PillTone;
  owner: string;
  helper: string;
  reason: string;
  slots: string;
  summary: string;
}

export function decisionLine(f: FoldedDecision): DecisionLineView {
  const r = f.row;
  return {
    key: `${r.nodeId}:${r.id}`,
    count: f.count,
    countLabel: f.count > 1 ? `×${f.count}` : '',
    at: formatClockMs(f.lastAt),
    atTitle: formatDateTimeMs(f.lastAt),
    span:
      f.count > 1
        ? `${formatClockMs(f.firstAt)} – ${formatClockMs(f.lastAt)} (${formatMillis(f.lastAt - f.firstAt)})`
        : null,
    node: r.nodeId,
    version: r.routerVersion,
    kind: r.kind,
    event: r.event,
    tone: eventTone(r.event),
    owner: formatModelRef(r.ownerNode, r.ownerModel),
    helper: formatModelRef(r.helperNode, r.helperModel),
    reason: r.reason ?? DASH,
    slots: r.slots === null ? DASH : String(r.slots),
    summary: decisionSummary(r),
  };
}

/** `23 rows in 9 lines`, and whether older rows are left to load. */
export function logCountLabel(rows: number, lines: number, more: boolean): string {
  const base = `${rows} row${rows === 1 ? '' : 's'} in ${lines} line${lines === 1 ? '' : 's'}`;
  return more ? `${base} · older rows not loaded yet` : base;
}

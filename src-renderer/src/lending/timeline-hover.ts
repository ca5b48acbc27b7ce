import { DASH, formatClockMs, formatDateTimeMs, formatMillis } from '../format';
import { columnName, type DecisionVariable, decisionVariables } from './decision-view';
import type { TimelineEvent, TimelineKind } from './timeline-events';
import { ownerColor } from './timeline-layout';

/**
 * What hovering a timeline item shows, pure: what it is, where and when, and its decision row with every variable
 * (decision-view's `decisionVariables`, the log's expanded line); a job or load also lists its analytics row, and a
 * borrowed job the owner's `lent` row. Tested in renderer-timeline.test.ts.
 */

export const KIND_LABELS: Record<TimelineKind, string> = {
  own: 'own job',
  borrowed: 'borrowed job',
  load: 'load',
  restore: 'restore',
  lease: 'lease',
  probe: 'probe lease',
  grant: 'plan: lease granted',
  hold: 'hold',
  lent: 'lent',
  returned: 'returned',
  cutoff: 'cut-off',
  fate: 'relay broke: fate resolved',
};

export interface TimelineHoverView {
  title: string;
  where: string;
  when: string;
  /** The decision row (every variable), when there is one. */
  decision: DecisionVariable[] | null;
  /** The analytics row of a job or load, field by field under its column name. */
  analytics: DecisionVariable[] | null;
}

const MS_KEYS = new Set(['queueWaitMs', 'durationMs', 'serviceMs']);

function analyticsVariables(row: object): DecisionVariable[] {
  return Object.entries(row).map(([k, v]) => {
    const empty = v === null || v === undefined || v === '';
    if (empty) return { name: columnName(k), value: DASH, raw: null, empty };
    if (k === 'finishedAt' && typeof v === 'number')
      return { name: columnName(k), value: formatDateTimeMs(v), raw: String(v), empty };
    if (MS_KEYS.has(k) && typeof v === 'number')
      return { name: columnName(k), value: formatMillis(v), raw: String(v), empty };
    return { name: columnName(k), value: String(v), raw: null, empty };
  });
}

export function timelineHover(e: TimelineEvent): TimelineHoverView {
  const instant = e.start === e.end;
  return {
    title: `${KIND_LABELS[e.kind]}: ${e.label}`,
    where: `${e.node} · ${e.lane}`,
    when: instant
      ? formatClockMs(e.start)
      : `${formatClockMs(e.start)} – ${formatClockMs(e.end)} (${formatMillis(e.end - e.start)})`,
    decision: e.decision ? decisionVariables(e.decision) : null,
    analytics:
      e.source.type === 'decision'
        ? null
        : analyticsVariables(
            e.source.type === 'request' ? { recordedBy: e.source.recordedBy, ...e.source.row } : e.source.row,
          ),
  };
}

/** The legend: every kind with its label, in drawing order (borrowed jobs: one colour per owner). */
export const LEGEND_KINDS: TimelineKind[] = [
  'own',
  'borrowed',
  'load',
  'restore',
  'lease',
  'probe',
  'grant',
  'hold',
  'lent',
  'returned',
  'cutoff',
  'fate',
];

/** The owners of the borrowed jobs shown, each with its colour (the legend's swatches), by name. */
export function borrowedOwners(events: readonly TimelineEvent[]): { owner: string; color: string }[] {
  const owners = new Set<string>();
  for (const e of events) if (e.kind === 'borrowed') owners.add(e.colorKey);
  return [...owners].sort().map((owner) => ({ owner, color: ownerColor(owner) }));
}

/** `12 own jobs · 3 leases …`: how many of each kind the timeline holds (shown under the chart). */
export function kindCounts(events: readonly TimelineEvent[]): Record<TimelineKind, number> {
  const out = Object.fromEntries(LEGEND_KINDS.map((k) => [k, 0])) as Record<TimelineKind, number>;
  for (const e of events) out[e.kind] += 1;
  return out;
}

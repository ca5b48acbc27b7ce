import { INSTANT_KINDS, LENDING_TRACK_KINDS, type TimelineEvent, type TimelineKind } from './timeline-events';

/**
 * The lease timeline's layout, pure: events → one row per node and lane (nodes in first-seen order, lanes text,
 * image, whisper, shared, then others), each with a lease track, an instants track (grants, holds, lent, returns,
 * cut-offs) and a jobs track (jobs, loads, restores); rectangles in CSS pixels for a viewport [from, to] and a width,
 * their colours, the time axis ticks; hit-testing for the hover; zoom and pan of the viewport. The canvas component
 * only paints what this returns. Only the contract and its siblings are imported: the benchmark runs it in Node.
 * Tested in renderer-timeline.test.ts.
 */

export interface Viewport {
  from: number;
  to: number;
}

export interface TimelineRowBox {
  key: string;
  node: string;
  lane: string;
  label: string;
  /** Top of the row: its lease track starts here, its instants `LEASE_H + GAP` below, its jobs `JOBS_Y` below. */
  y: number;
}

export interface TimelineRect {
  x: number;
  y: number;
  w: number;
  h: number;
  color: string;
  /** Index of the event in the list given to the layout. */
  event: number;
  kind: TimelineKind;
}

export interface TimelineTick {
  x: number;
  at: number;
  /** Whether the label needs milliseconds (steps under a second). */
  ms: boolean;
}

export interface TimelineLayout {
  viewport: Viewport;
  width: number;
  height: number;
  /** Where the plot starts (the row labels are to its left). */
  plotX: number;
  rows: TimelineRowBox[];
  /** In drawing order; later ones paint over earlier ones, and the hit test prefers them. */
  rects: TimelineRect[];
  ticks: TimelineTick[];
}

export const AXIS_H = 18;
export const LEASE_H = 6;
export const INSTANT_H = 8;
export const JOBS_H = 14;
export const GAP = 2;
/** Offsets in a row: leases at 0, instants (grants, holds, lent, returns, cut-offs) below them, then the jobs. */
export const INSTANT_Y = LEASE_H + GAP;
export const JOBS_Y = INSTANT_Y + INSTANT_H + GAP;
export const ROW_H = JOBS_Y + JOBS_H + 6;
/** Instants are drawn this wide, centred on their time. */
export const INSTANT_W = 5;
export const LABEL_W = 150;

const LANE_ORDER = ['text', 'image', 'whisper', 'shared'];

export const KIND_COLORS: Record<Exclude<TimelineKind, 'borrowed'>, string> = {
  own: '#4c78a8',
  load: '#9aa0a6',
  restore: '#b07d2b',
  lease: '#54a24b',
  probe: '#e5b84b',
  grant: '#2f7d32',
  hold: '#f58518',
  lent: '#1b9e77',
  returned: '#9467bd',
  cutoff: '#d62728',
  fate: '#8c2d04',
};
const FAILED_LOAD = '#e45756';
/** Borrowed jobs: one colour per owner, picked by a hash of its name (stable across reads and pans). */
export const OWNER_PALETTE = ['#e377c2', '#17becf', '#bcbd22', '#8c564b', '#7b4fd0', '#c49c94', '#aec7e8', '#98df8a'];

export function ownerColor(owner: string): string {
  let h = 0;
  for (let i = 0; i < owner.length; i++) h = (Math.imul(h, 31) + owner.charCodeAt(i)) | 0;
  return OWNER_PALETTE[Math.abs(h) % OWNER_PALETTE.length];
}

export function colorOf(e: TimelineEvent): string {
  if (e.kind === 'borrowed') return ownerColor(e.colorKey);
  if (e.colorKey === 'load_failed') return FAILED_LOAD;
  return KIND_COLORS[e.kind];
}

const rowKey = (node: string, lane: string) => `${node}\u0000${lane}`;

/** Rows in display order: nodes as first seen, lanes in LANE_ORDER then by name. */
export function timelineRows(events: readonly TimelineEvent[]): TimelineRowBox[] {
  const lanesOf = new Map<string, Set<string>>();
  for (const e of events) {
    let lanes = lanesOf.get(e.node);
    if (!lanes) lanesOf.set(e.node, (lanes = new Set()));
    lanes.add(e.lane);
  }
  const rank = (l: string) => (LANE_ORDER.includes(l) ? LANE_ORDER.indexOf(l) : LANE_ORDER.length);
  const rows: TimelineRowBox[] = [];
  for (const [node, lanes] of lanesOf) {
    for (const lane of [...lanes].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))) {
      rows.push({ key: rowKey(node, lane), node, lane, label: `${node} · ${lane}`, y: AXIS_H + rows.length * ROW_H });
    }
  }
  return rows;
}

const TICK_STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000,
  900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000,
];

/** Ticks at a round step, about every `spacing` pixels. */
export function timelineTicks(viewport: Viewport, plotX: number, plotW: number, spacing = 110): TimelineTick[] {
  const span = viewport.to - viewport.from;
  if (!(span > 0) || plotW <= 0) return [];
  const want = (span * spacing) / plotW;
  const step = TICK_STEPS.find((s) => s >= want) ?? TICK_STEPS[TICK_STEPS.length - 1];
  const out: TimelineTick[] = [];
  for (let at = Math.ceil(viewport.from / step) * step; at <= viewport.to; at += step)
    out.push({ x: plotX + ((at - viewport.from) / span) * plotW, at, ms: step < 1_000 });
  return out;
}

/** Lays out every event that shows in the viewport (rows keep their place whatever is in view). */
export function layoutTimeline(events: readonly TimelineEvent[], viewport: Viewport, width: number): TimelineLayout {
  const rows = timelineRows(events);
  const rowY = new Map(rows.map((r) => [r.key, r.y]));
  const plotX = LABEL_W;
  const plotW = Math.max(1, width - plotX);
  const span = Math.max(1, viewport.to - viewport.from);
  const scale = plotW / span;
  const spans: TimelineRect[] = [];
  const lending: TimelineRect[] = [];
  const instants: TimelineRect[] = [];
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    const instant = INSTANT_KINDS.has(e.kind);
    if (
      instant
        ? e.start < viewport.from - span * 0.01 || e.start > viewport.to + span * 0.01
        : e.end < viewport.from || e.start > viewport.to
    )
      continue;
    const top = rowY.get(rowKey(e.node, e.lane))!;
    const color = colorOf(e);
    if (instant) {
      instants.push({
        x: plotX + (e.start - viewport.from) * scale - INSTANT_W / 2,
        y: top + INSTANT_Y,
        w: INSTANT_W,
        h: INSTANT_H,
        color,
        event: i,
        kind: e.kind,
      });
      continue;
    }
    const lease = LENDING_TRACK_KINDS.has(e.kind);
    const x0 = Math.max(plotX, plotX + (e.start - viewport.from) * scale);
    const x1 = Math.min(plotX + plotW, plotX + (e.end - viewport.from) * scale);
    (lease ? lending : spans).push({
      x: x0,
      y: top + (lease ? 0 : JOBS_Y),
      w: Math.max(1, x1 - x0),
      h: lease ? LEASE_H : JOBS_H,
      color,
      event: i,
      kind: e.kind,
    });
  }
  return {
    viewport,
    width,
    height: AXIS_H + rows.length * ROW_H,
    plotX,
    rows,
    rects: [...spans, ...lending, ...instants],
    ticks: timelineTicks(viewport, plotX, plotW),
  };
}

/** The event under (x, y), or null: the topmost rectangle (instants first), with a pixel of slack. */
export function hitTest(layout: TimelineLayout, x: number, y: number, slack = 1): number | null {
  for (let i = layout.rects.length - 1; i >= 0; i--) {
    const r = layout.rects[i];
    if (x >= r.x - slack && x <= r.x + r.w + slack && y >= r.y - slack && y <= r.y + r.h + slack) return r.event;
  }
  return null;
}

/**
 * The centres of the lease and instant tracks' rectangles in view (leases, grants, holds, lent, returns, cut-offs), at most
 * `max`: the canvas's fallback content lists them (screen readers, and the e2e test hovers one).
 */
export function lendingItemCentres(
  layout: TimelineLayout,
  max = 300,
): { event: number; kind: TimelineKind; x: number; y: number }[] {
  const out: { event: number; kind: TimelineKind; x: number; y: number }[] = [];
  for (const r of layout.rects) {
    if (!LENDING_TRACK_KINDS.has(r.kind)) continue;
    out.push({ event: r.event, kind: r.kind, x: Math.round(r.x + r.w / 2), y: Math.round(r.y + r.h / 2) });
    if (out.length >= max) break;
  }
  return out;
}

/**
 * The viewport when not zoomed: the range read, from a little before its first event (an empty stretch before the
 * first event is left out, so a burst of seconds in a 15-minute range is readable), never shorter than MIN_SPAN_MS.
 */
export function fitViewport(events: readonly TimelineEvent[], range: Viewport): Viewport {
  let first = Number.POSITIVE_INFINITY;
  for (const e of events) if (e.start < first) first = e.start;
  if (!Number.isFinite(first) || first <= range.from) return range;
  const from = Math.max(range.from, first - Math.max(MIN_SPAN_MS, range.to - first) * 0.05);
  return { from: Math.min(from, range.to - MIN_SPAN_MS), to: range.to };
}

/** The smallest viewport zoom goes to. */
export const MIN_SPAN_MS = 50;

/** Zooms by `factor` (< 1 in, > 1 out) around the time at `fraction` (0..1) of the plot. */
export function zoomAt(v: Viewport, factor: number, fraction: number): Viewport {
  const span = v.to - v.from;
  const next = Math.max(MIN_SPAN_MS, span * factor);
  const f = Math.min(1, Math.max(0, fraction));
  const pivot = v.from + span * f;
  return { from: pivot - next * f, to: pivot - next * f + next };
}

/** Pans by `fraction` of the viewport (positive: later). */
export function panBy(v: Viewport, fraction: number): Viewport {
  const d = (v.to - v.from) * fraction;
  return { from: v.from + d, to: v.to + d };
}

/** The fraction of the plot at pixel x (for zooming around the cursor). */
export function plotFraction(layout: Pick<TimelineLayout, 'plotX' | 'width'>, x: number): number {
  return Math.min(1, Math.max(0, (x - layout.plotX) / Math.max(1, layout.width - layout.plotX)));
}

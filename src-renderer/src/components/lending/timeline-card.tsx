import { type MouseEvent as ReactMouseEvent, useEffect, useMemo, useRef, useState } from 'react';
import { timelineEvents } from '../../lending/timeline-events';
import { borrowedOwners, KIND_LABELS, kindCounts, LEGEND_KINDS, timelineHover } from '../../lending/timeline-hover';
import {
  colorOf,
  fitViewport,
  hitTest,
  KIND_COLORS,
  layoutTimeline,
  lendingItemCentres,
  panBy,
  plotFraction,
  type Viewport,
  zoomAt,
} from '../../lending/timeline-layout';
import { REFRESH_INTERVAL_MS, startPolling } from '../../store/polling';
import { rangeLabel, TIMELINE_RANGES_MS } from '../../store/timeline-slice';
import { useAppStore } from '../../store/use-app-store';
import { Notice } from '../notice';
import { paintTimeline } from './timeline-paint';

const ZOOM_STEP = 0.5;

function cssColors(el: HTMLElement) {
  const s = getComputedStyle(el);
  const v = (name: string, fallback: string) => s.getPropertyValue(name).trim() || fallback;
  return {
    text: v('--text', '#1c2430'),
    muted: v('--muted', '#6b7685'),
    border: v('--border', '#dde2e8'),
    surface: v('--surface', '#fff'),
  };
}

/**
 * The lease timeline: per node and lane, own and borrowed jobs, loads and restores, leases, grants,
 * holds, returns and cut-offs of the last minutes, on a canvas. Wheel or buttons zoom, dragging pans; hovering an item
 * shows its decision row with every variable. The layout is lending/timeline-layout.ts; this only paints it.
 */
export function TimelineCard() {
  const timeline = useAppStore((s) => s.timeline);
  const loadTimeline = useAppStore((s) => s.loadTimeline);
  useEffect(() => startPolling(() => loadTimeline(), REFRESH_INTERVAL_MS), [loadTimeline]);

  // How long the last events, layout and paint took: on the canvas as data-*-ms (the browser benchmark reads them).
  const took = useRef({ events: 0, layout: 0 });
  const events = useMemo(() => {
    const t0 = performance.now();
    const out = timelineEvents(timeline.page, timeline.decisions);
    took.current.events = performance.now() - t0;
    return out;
  }, [timeline.page, timeline.decisions]);
  const [zoomed, setZoomed] = useState<Viewport | null>(null);
  const pageFrom = timeline.page?.from ?? 0;
  const pageTo = timeline.page?.to ?? 1;
  const viewport: Viewport = useMemo(
    () => zoomed ?? fitViewport(events, { from: pageFrom, to: pageTo }),
    [zoomed, events, pageFrom, pageTo],
  );
  const [width, setWidth] = useState(800);
  const layout = useMemo(() => {
    const t0 = performance.now();
    const out = layoutTimeline(events, viewport, width);
    took.current.layout = performance.now() - t0;
    return out;
  }, [events, viewport, width]);
  const [hoverId, setHoverId] = useState<string | null>(null);
  const hoveredIndex = hoverId === null ? -1 : events.findIndex((e) => e.id === hoverId);
  const hovered = hoveredIndex >= 0 ? events[hoveredIndex] : null;

  const wrap = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const drag = useRef<{ x: number; viewport: Viewport } | null>(null);

  useEffect(() => {
    const el = wrap.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(Math.max(300, Math.floor(el.clientWidth))));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  useEffect(() => {
    const c = canvas.current;
    const ctx = c?.getContext('2d');
    if (!c || !ctx) return;
    const dpr = window.devicePixelRatio || 1;
    c.width = Math.round(layout.width * dpr);
    c.height = Math.round(layout.height * dpr);
    const t0 = performance.now();
    paintTimeline(ctx, layout, cssColors(c), hoveredIndex >= 0 ? hoveredIndex : null, dpr);
    Object.assign(c.dataset, {
      eventsMs: took.current.events.toFixed(2),
      layoutMs: took.current.layout.toFixed(2),
      paintMs: (performance.now() - t0).toFixed(2),
      rects: String(layout.rects.length),
    });
  }, [layout, hoveredIndex]);

  // Wheel zoom around the cursor (a non-passive listener, so the page does not scroll meanwhile).
  useEffect(() => {
    const c = canvas.current;
    if (!c) return;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const x = e.clientX - c.getBoundingClientRect().left;
      setZoomed((z) => zoomAt(z ?? viewport, e.deltaY > 0 ? 1.25 : 0.8, plotFraction(layout, x)));
    };
    c.addEventListener('wheel', onWheel, { passive: false });
    return () => c.removeEventListener('wheel', onWheel);
  });

  const local = (e: ReactMouseEvent) => {
    const r = e.currentTarget.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };
  const onMove = (e: ReactMouseEvent<HTMLCanvasElement>) => {
    const p = local(e);
    if (drag.current && e.buttons === 1) {
      const plotW = Math.max(1, layout.width - layout.plotX);
      setZoomed(panBy(drag.current.viewport, -(p.x - drag.current.x) / plotW));
      return;
    }
    const hit = hitTest(layout, p.x, p.y);
    setHoverId(hit === null ? null : events[hit].id);
  };

  const counts = kindCounts(events);
  const owners = borrowedOwners(events);
  const items = lendingItemCentres(layout);
  const hover = hovered ? timelineHover(hovered) : null;
  const span = viewport.to - viewport.from;

  return (
    <div className="card timeline-card" data-testid="timeline-card" data-events={events.length}>
      <div className="card-head">
        <h2>Lease timeline</h2>
        <span className="muted small">
          every node and lane; wheel or buttons zoom, drag pans, hover shows the decision
        </span>
        <span className="spacer" />
        <label className="small">
          last{' '}
          <select
            data-testid="timeline-range"
            value={timeline.rangeMs}
            onChange={(e) => {
              setZoomed(null);
              void loadTimeline(Number(e.target.value));
            }}
          >
            {TIMELINE_RANGES_MS.map((r) => (
              <option key={r} value={r}>
                {rangeLabel(r)}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          data-testid="timeline-zoom-in"
          onClick={() => setZoomed(zoomAt(viewport, ZOOM_STEP, 0.5))}
        >
          +
        </button>
        <button
          type="button"
          data-testid="timeline-zoom-out"
          onClick={() => setZoomed(zoomAt(viewport, 1 / ZOOM_STEP, 0.5))}
        >
          −
        </button>
        <button
          type="button"
          data-testid="timeline-zoom-reset"
          disabled={zoomed === null}
          onClick={() => setZoomed(null)}
          title="Back to everything read, following new rows"
        >
          whole range
        </button>
      </div>
      {timeline.failure && (
        <Notice kind="error" testId="timeline-error">
          {timeline.failure.message}
          {timeline.page && <span className="muted"> — showing the last rows read</span>}
        </Notice>
      )}
      {timeline.page?.missing && (
        <p className="muted small" data-testid="timeline-missing">
          not gathered from: {timeline.page.missing.join(', ')}
        </p>
      )}
      <div className="timeline-wrap" ref={wrap}>
        {events.length === 0 ? (
          <p className="muted empty" data-testid="timeline-empty">
            {timeline.page ? 'Nothing ran in this range.' : 'Reading the timeline…'}
          </p>
        ) : (
          <canvas
            ref={canvas}
            data-testid="timeline-canvas"
            data-span-ms={Math.round(span)}
            style={{ width: layout.width, height: layout.height, cursor: drag.current ? 'grabbing' : 'crosshair' }}
            onMouseMove={onMove}
            onMouseDown={(e) => {
              drag.current = { x: local(e).x, viewport };
            }}
            onMouseUp={() => {
              drag.current = null;
            }}
            onMouseLeave={() => {
              drag.current = null;
            }}
          >
            <ul data-testid="timeline-items">
              {items.map((i) => (
                <li key={events[i.event].id} data-testid="timeline-item" data-kind={i.kind} data-x={i.x} data-y={i.y}>
                  {KIND_LABELS[i.kind]}: {events[i.event].label}
                </li>
              ))}
            </ul>
          </canvas>
        )}
      </div>
      {hover && hovered && (
        <div className="timeline-hover" data-testid="timeline-hover" data-kind={hovered.kind}>
          <p className="small">
            <span className="swatch" style={{ background: colorOf(hovered) }} />{' '}
            <strong data-testid="timeline-hover-title">{hover.title}</strong>{' '}
            <span className="muted">
              {hover.where} · {hover.when}
            </span>
          </p>
          {hover.decision && (
            <dl className="decision-vars" data-testid="timeline-hover-decision">
              {hover.decision.map((v) => (
                <div
                  key={v.name}
                  className={v.empty ? 'empty-var' : undefined}
                  data-testid="timeline-hover-var"
                  data-name={v.name}
                  title={v.raw ?? undefined}
                >
                  <dt>{v.name}</dt>
                  <dd>{v.value}</dd>
                </div>
              ))}
            </dl>
          )}
          {hover.analytics && (
            <dl className="decision-vars" data-testid="timeline-hover-analytics">
              {hover.analytics.map((v) => (
                <div
                  key={v.name}
                  className={v.empty ? 'empty-var' : undefined}
                  data-name={v.name}
                  title={v.raw ?? undefined}
                >
                  <dt>{v.name}</dt>
                  <dd>{v.value}</dd>
                </div>
              ))}
            </dl>
          )}
        </div>
      )}
      <ul className="timeline-legend small">
        {LEGEND_KINDS.map((k) => (
          <li key={k} data-testid={`timeline-count-${k}`} data-count={counts[k]}>
            {k === 'borrowed' ? (
              owners.map((o) => (
                <span
                  key={o.owner}
                  className="swatch"
                  style={{ background: o.color }}
                  title={`borrowed from ${o.owner}`}
                />
              ))
            ) : (
              <span className="swatch" style={{ background: KIND_COLORS[k] }} />
            )}{' '}
            {KIND_LABELS[k]}
            {k === 'borrowed' && owners.length > 0 && (
              <span className="muted"> (from {owners.map((o) => o.owner).join(', ')})</span>
            )}{' '}
            <span className="muted">{counts[k]}</span>
          </li>
        ))}
        {timeline.decisionsCut && <li className="muted">older lending rows not read</li>}
        {timeline.page?.nodes.some((n) => n.truncated) && <li className="muted">older jobs not read</li>}
      </ul>
    </div>
  );
}

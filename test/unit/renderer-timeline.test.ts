import { describe, expect, it } from 'vitest';
import { type TimelineEvent, timelineEvents } from '../../src-renderer/src/lending/timeline-events';
import { borrowedOwners, kindCounts, timelineHover } from '../../src-renderer/src/lending/timeline-hover';
import {
  AXIS_H,
  fitViewport,
  hitTest,
  INSTANT_H,
  INSTANT_W,
  INSTANT_Y,
  JOBS_Y,
  KIND_COLORS,
  LABEL_W,
  LEASE_H,
  layoutTimeline,
  lendingItemCentres,
  MIN_SPAN_MS,
  ownerColor,
  panBy,
  plotFraction,
  ROW_H,
  timelineTicks,
  zoomAt,
} from '../../src-renderer/src/lending/timeline-layout';
import type {
  DecisionRowWire,
  TimelineLoadWire,
  TimelinePageWire,
  TimelineRequestWire,
} from '../../src-router/contract';

// The lease timeline's pure view-model: rows of the analytics and the decision log → events → rows, rectangles,
// colours, hit-testing, zoom and pan; the hover's decision row with every variable.

const T0 = 1_700_000_000_000;

const req = (id: number, over: Partial<TimelineRequestWire>): TimelineRequestWire => ({
  id,
  finishedAt: T0 + 1_000,
  nodeId: 'owner',
  model: 'model-a',
  localId: 'a',
  endpoint: 'chat',
  streamed: false,
  queueWaitMs: 0,
  durationMs: 200,
  serviceMs: 200,
  outcome: 'ok',
  status: 200,
  requestId: `q${id}`,
  lentFrom: null,
  ...over,
});
const load = (id: number, over: Partial<TimelineLoadWire>): TimelineLoadWire => ({
  id,
  finishedAt: T0 + 100,
  nodeId: 'owner',
  model: 'model-a',
  localId: 'a',
  lane: 'text',
  durationMs: 100,
  success: true,
  displacedLocalId: null,
  error: null,
  ...over,
});
const row = (id: number, over: Partial<DecisionRowWire>): DecisionRowWire => ({
  id,
  at: T0,
  nodeId: 'owner',
  routerVersion: '0.1.0',
  kind: 'dispatch',
  event: 'lent',
  trigger: null,
  linkId: 'l1',
  ownerNode: 'owner',
  ownerModel: 'a',
  helperNode: 'helper',
  helperModel: 'b',
  held: null,
  backlog: null,
  ownerDrainMs: null,
  helperSwitchMs: null,
  helperServiceMs: null,
  serviceSource: null,
  helperIdleMs: null,
  outcome: null,
  reason: null,
  slots: 2,
  requestsOut: 1,
  ownerPredictedFinishMs: null,
  ownerJobMs: null,
  helperJobMs: null,
  waitedMs: null,
  borrowedInBackend: null,
  requestId: null,
  details: null,
  ...over,
});
const page = (nodes: TimelinePageWire['nodes'], to = T0 + 60_000): TimelinePageWire => ({
  from: T0 - 1_000,
  to,
  nodes,
});
const node = (nodeId: string, requests: TimelineRequestWire[] = [], loads: TimelineLoadWire[] = []) => ({
  nodeId,
  requests,
  loads,
  truncated: false,
});
const byKind = (events: TimelineEvent[], kind: string) => events.filter((e) => e.kind === kind);

describe('timeline events', () => {
  it('a job spans its engine time (queue wait left out) on the node that served it, in the lane of its model', () => {
    const events = timelineEvents(
      page([node('owner', [req(1, { queueWaitMs: 50, durationMs: 250 })], [load(1, { lane: 'shared' })])]),
      [],
    );
    const [job] = byKind(events, 'own');
    expect(job).toMatchObject({
      node: 'owner',
      lane: 'shared',
      start: T0 + 800,
      end: T0 + 1_000,
      colorKey: 'own',
      label: 'a',
    });
    expect(timelineEvents(page([node('owner', [req(1, { endpoint: 'image', localId: 'img' })])]), [])[0].lane).toBe(
      'image',
    );
  });

  it("a borrowed job is the helper's row, coloured by its owner, with the owner's lent row; the owner's copy is dropped", () => {
    const lent = row(7, { event: 'lent', requestId: 'q9' });
    const events = timelineEvents(
      page([
        node('owner', [req(1, { nodeId: 'helper', localId: 'b', requestId: 'q9' })]),
        node('helper', [
          req(5, { nodeId: 'helper', localId: 'b', model: 'model-b', requestId: 'q9', lentFrom: 'owner/a' }),
        ]),
      ]),
      [lent],
    );
    const borrowed = byKind(events, 'borrowed');
    expect(borrowed).toHaveLength(1);
    expect(borrowed[0]).toMatchObject({
      id: 'r:helper:5',
      node: 'helper',
      colorKey: 'owner/a',
      label: 'b for owner/a',
      decision: lent,
    });
    expect(byKind(events, 'own')).toHaveLength(0);
    expect(borrowedOwners(events)).toEqual([{ owner: 'owner/a', color: ownerColor('owner/a') }]);
  });

  it("without the helper's row (not gathered), the owner's copy stands in, its owner from the lent row", () => {
    const events = timelineEvents(
      page([
        node('owner', [
          req(1, { nodeId: 'helper', localId: 'b', requestId: 'q9' }),
          req(2, { nodeId: 'helper', localId: 'b', requestId: null }),
        ]),
      ]),
      [row(7, { requestId: 'q9' })],
    );
    expect(byKind(events, 'borrowed').map((e) => [e.node, e.colorKey])).toEqual([
      ['helper', 'owner/a'],
      ['helper', 'owner/model-a'],
    ]);
  });

  it('a request handed back unstarted is no job (its return is an instant)', () => {
    expect(
      timelineEvents(
        page([node('helper', [req(1, { nodeId: 'helper', outcome: 'returned', lentFrom: 'owner/a' })])]),
        [],
      ),
    ).toEqual([]);
  });

  it('a load of what the previous load on its lane displaced is a restore; a failed load is marked', () => {
    const events = timelineEvents(
      page([
        node(
          'helper',
          [],
          [
            load(1, { nodeId: 'helper', localId: 'b', finishedAt: T0 + 100 }),
            load(2, { nodeId: 'helper', localId: 'x', finishedAt: T0 + 500, displacedLocalId: 'b' }),
            load(3, { nodeId: 'helper', localId: 'b', finishedAt: T0 + 900 }),
            load(4, { nodeId: 'helper', localId: 'y', finishedAt: T0 + 950, success: false }),
          ],
        ),
      ]),
      [],
    );
    expect(events.map((e) => [e.kind, e.label])).toEqual([
      ['load', 'load b'],
      ['load', 'load x'],
      ['restore', 'restore b'],
      ['load', 'load y (failed)'],
    ]);
    expect(events[3].colorKey).toBe('load_failed');
  });

  it('a lease spans from its update to the next change or clear, else its TTL; renewals of the same lease are one span', () => {
    const upd = (id: number, at: number, over: Partial<DecisionRowWire> = {}) =>
      row(id, { event: 'lease_updated', at, details: { probe: false, ttlMs: 5_000 }, ...over });
    const rows = [
      upd(1, T0),
      upd(2, T0 + 1_000),
      upd(3, T0 + 2_000, { details: { probe: true, ttlMs: 5_000 }, slots: 1 }),
      row(4, { event: 'lease_cleared', at: T0 + 3_000, reason: 'no_lease' }),
      upd(5, T0 + 10_000),
    ];
    const leases = timelineEvents(page([], T0 + 12_000), [...rows].reverse()).filter(
      (e) => e.kind === 'lease' || e.kind === 'probe',
    );
    expect(leases.map((e) => [e.kind, e.start - T0, e.end - T0, e.count])).toEqual([
      ['lease', 0, 2_000, 2],
      ['probe', 2_000, 3_000, 1],
      ['lease', 10_000, 12_000, 1],
    ]);
    expect(leases[0].label).toBe('lease → helper/b ×2 (2 renewals)');
    expect(leases[0]).toMatchObject({ node: 'owner', lane: 'text', colorKey: 'helper/b' });
  });

  it('grants, holds, lent, returns and cut-offs are instants on the owner (a hand-back on the helper); skipped plans are not shown', () => {
    const events = timelineEvents(page([]), [
      row(1, { nodeId: 'master', kind: 'plan', event: 'granted', outcome: 'granted', at: T0 + 1 }),
      row(2, { nodeId: 'master', kind: 'plan', event: 'skipped', outcome: 'skipped', at: T0 + 2 }),
      row(3, { event: 'held_for_helper', at: T0 + 3 }),
      row(4, { event: 'lent', at: T0 + 4 }),
      row(5, { event: 'returned', reason: 'own_work_arrived', at: T0 + 5 }),
      row(6, { event: 'returned', reason: 'cut_off', at: T0 + 6 }),
      row(7, { nodeId: 'helper', kind: 'helper', event: 'borrowed_returned', reason: 'busy_on_arrival', at: T0 + 7 }),
      row(8, { nodeId: 'master', event: 'lent_fate', reason: 'answered', at: T0 + 8 }),
    ]);
    expect(events.map((e) => [e.kind, e.node, e.start - T0, e.start === e.end])).toEqual([
      ['grant', 'owner', 1, true],
      ['hold', 'owner', 3, true],
      ['lent', 'owner', 4, true],
      ['returned', 'owner', 5, true],
      ['cutoff', 'owner', 6, true],
      ['returned', 'helper', 7, true],
      ['fate', 'owner', 8, true],
    ]);
    expect(events[4].label).toBe('cut off from helper/b (cut_off)');
    expect(events[6].label).toBe('relay broke: answered at helper/b');
    expect(kindCounts(events)).toMatchObject({ grant: 1, hold: 1, lent: 1, returned: 2, cutoff: 1, fate: 1, own: 0 });
  });
});

describe('timeline layout', () => {
  const events = timelineEvents(
    page([
      node(
        'owner',
        [req(1, { finishedAt: T0 + 1_000, durationMs: 500 })],
        [load(1, { localId: 'img', lane: 'image', finishedAt: T0 - 10 })],
      ),
      node('helper', [
        req(2, { nodeId: 'helper', localId: 'b', lentFrom: 'owner/a', finishedAt: T0 + 2_000, durationMs: 1_000 }),
      ]),
    ]),
    [
      row(1, { event: 'lease_updated', at: T0, details: { probe: false, ttlMs: 4_000 } }),
      row(2, { event: 'lent', at: T0 + 500 }),
    ],
  );
  const vp = { from: T0, to: T0 + 4_000 };
  const width = LABEL_W + 400; // 10 ms a pixel

  it('one row per node and lane, nodes as first seen, text before image', () => {
    const l = layoutTimeline(events, vp, width);
    expect(l.rows.map((r) => [r.label, r.y])).toEqual([
      ['owner · text', AXIS_H],
      ['owner · image', AXIS_H + ROW_H],
      ['helper · text', AXIS_H + 2 * ROW_H],
    ]);
    expect(l.height).toBe(AXIS_H + 3 * ROW_H);
  });

  it('spans on the jobs track, leases and instants on the lending track, painted last; colours by kind and owner', () => {
    const l = layoutTimeline(events, vp, width);
    const of = (kind: string) => l.rects.find((r) => r.kind === kind)!;
    expect(of('own')).toMatchObject({ x: LABEL_W + 50, y: AXIS_H + JOBS_Y, w: 50, color: KIND_COLORS.own });
    expect(of('borrowed')).toMatchObject({
      x: LABEL_W + 100,
      y: AXIS_H + 2 * ROW_H + JOBS_Y,
      w: 100,
      color: ownerColor('owner/a'),
    });
    expect(of('lease')).toMatchObject({ x: LABEL_W, y: AXIS_H, w: 400, h: LEASE_H, color: KIND_COLORS.lease });
    expect(of('lent')).toMatchObject({
      x: LABEL_W + 50 - INSTANT_W / 2,
      y: AXIS_H + INSTANT_Y,
      w: INSTANT_W,
      h: INSTANT_H,
    });
    expect(l.rects.at(-1)!.kind).toBe('lent');
    // The load ended before the viewport: culled; its row stays.
    expect(l.rects.some((r) => r.kind === 'load')).toBe(false);
    expect(new Set(['owner/a', 'gpu-a/x', 'master/a'].map(ownerColor)).size).toBe(3);
    expect(Object.values(KIND_COLORS)).not.toContain(ownerColor('master/a'));
  });

  it('a span is clipped to the plot and never thinner than a pixel', () => {
    const l = layoutTimeline(events, { from: T0 + 600, to: T0 + 1_600_000 }, width);
    const own = l.rects.find((r) => r.kind === 'own')!;
    expect(own.x).toBe(LABEL_W);
    expect(own.w).toBe(1);
  });

  it('hit-testing finds the item under the pointer on each track (the lease under an instant too), and nothing on empty space', () => {
    const l = layoutTimeline(events, vp, width);
    const ev = (kind: string) => events.findIndex((e) => e.kind === kind);
    expect(hitTest(l, LABEL_W + 50, AXIS_H + INSTANT_Y + 4)).toBe(ev('lent'));
    expect(hitTest(l, LABEL_W + 50, AXIS_H + 2)).toBe(ev('lease'));
    expect(hitTest(l, LABEL_W + 300, AXIS_H + 2)).toBe(ev('lease'));
    expect(hitTest(l, LABEL_W + 75, AXIS_H + JOBS_Y + 5)).toBe(ev('own'));
    expect(hitTest(l, LABEL_W + 300, AXIS_H + JOBS_Y + 5)).toBeNull();
    expect(hitTest(l, 10, 10)).toBeNull();
  });

  it('lists the lending items in view with their centres (the canvas fallback)', () => {
    const items = lendingItemCentres(layoutTimeline(events, vp, width));
    expect(items.map((i) => [i.kind, i.x, i.y])).toEqual([
      ['lease', LABEL_W + 200, AXIS_H + LEASE_H / 2],
      ['lent', LABEL_W + 50, AXIS_H + INSTANT_Y + INSTANT_H / 2],
    ]);
  });

  it('zooms around a point, pans by a fraction, never below the smallest span', () => {
    expect(zoomAt({ from: 0, to: 1_000 }, 0.5, 0.5)).toEqual({ from: 250, to: 750 });
    expect(zoomAt({ from: 0, to: 1_000 }, 0.5, 0)).toEqual({ from: 0, to: 500 });
    expect(zoomAt({ from: 0, to: 1_000 }, 2, 1)).toEqual({ from: -1_000, to: 1_000 });
    expect(zoomAt({ from: 0, to: 100 }, 0.1, 0.5).to - zoomAt({ from: 0, to: 100 }, 0.1, 0.5).from).toBe(MIN_SPAN_MS);
    expect(panBy({ from: 0, to: 1_000 }, -0.25)).toEqual({ from: -250, to: 750 });
    expect(plotFraction({ plotX: 100, width: 500 }, 300)).toBe(0.5);
    expect(plotFraction({ plotX: 100, width: 500 }, 0)).toBe(0);
  });

  it('not zoomed, the viewport fits the range from a little before its first event', () => {
    const range = { from: T0 - 900_000, to: T0 + 60_000 };
    // The first event is the load, 110 ms before T0.
    expect(fitViewport(events, range)).toEqual({ from: T0 - 110 - 60_110 * 0.05, to: T0 + 60_000 });
    expect(fitViewport([], range)).toEqual(range);
    expect(fitViewport(events, { from: T0 + 100, to: T0 + 60_000 })).toEqual({ from: T0 + 100, to: T0 + 60_000 });
  });

  it('ticks at a round step about every 110 px, with milliseconds below a second', () => {
    const ticks = timelineTicks({ from: 0, to: 10_000 }, 0, 1_100);
    expect(ticks.map((t) => t.at)).toEqual([0, 1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000, 9_000, 10_000]);
    expect(ticks.every((t) => !t.ms)).toBe(true);
    expect(timelineTicks({ from: 0, to: 1_000 }, 0, 1_100)[1]).toEqual({ x: 110, at: 100, ms: true });
    expect(timelineTicks({ from: 5, to: 5 }, 0, 100)).toEqual([]);
  });
});

describe('timeline hover', () => {
  it('a decision item shows its row with every variable, as the log does', () => {
    const lease = row(3, { event: 'lease_updated', at: T0, details: { probe: true, ttlMs: 5_000 } });
    const [e] = timelineEvents(page([]), [lease]);
    const h = timelineHover(e);
    expect(h.title).toBe('probe lease: probe lease → helper/b ×2');
    expect(h.where).toBe('owner · text');
    expect(h.analytics).toBeNull();
    const names = h.decision!.map((v) => v.name);
    expect(names.slice(0, 5)).toEqual(['id', 'at', 'node_id', 'router_version', 'kind']);
    expect(names).toEqual(expect.arrayContaining(['slots', 'helper_node', 'details.probe', 'details.ttlMs']));
    expect(h.decision!.find((v) => v.name === 'details.ttlMs')!.value).toBe('5 s');
  });

  it("a borrowed job shows its analytics row and the owner's lent row", () => {
    const lent = row(7, { requestId: 'q9' });
    const [e] = timelineEvents(
      page([
        node('helper', [
          req(5, { nodeId: 'helper', localId: 'b', requestId: 'q9', lentFrom: 'owner/a', queueWaitMs: 20 }),
        ]),
      ]),
      [lent],
    );
    const h = timelineHover(e);
    expect(h.title).toBe('borrowed job: b for owner/a');
    expect(h.decision!.find((v) => v.name === 'request_id')!.value).toBe('q9');
    expect(h.analytics!.map((v) => v.name)).toEqual(
      expect.arrayContaining(['recorded_by', 'lent_from', 'queue_wait_ms', 'finished_at']),
    );
    expect(h.analytics!.find((v) => v.name === 'queue_wait_ms')!.value).toBe('20 ms');
    expect(h.when).toMatch(/ – .* \(180 ms\)$/);
  });
});

/**
 * timeline-layout: the Lending tab's lease timeline laid out for 10,000 events (≤ 200 ms), in Node — the
 * pure view-model the canvas paints (src-renderer/src/lending/timeline-events.ts and timeline-layout.ts, shared with
 * the renderer like contract/): synthetic analytics and decision rows of 3 nodes → events → rows, rectangles and
 * ticks, for the whole range and a zoomed-in viewport; and one hit test. Reports the median of several repetitions
 * and its ratio to the 200 ms target. The painting itself is a loop of fillRect calls over what this returns.
 */

import { timelineEvents } from '../../src-renderer/src/lending/timeline-events';
import { hitTest, layoutTimeline } from '../../src-renderer/src/lending/timeline-layout';
import type { DecisionRowWire, TimelineLoadWire, TimelinePageWire, TimelineRequestWire } from '../contract';
import { seededRandom } from '../seeded-random';
import { type Cell, formatNumber, formatRatio, ratio } from './table';
import type { Benchmark, BenchOptions, BenchResult } from './types';

const EVENTS = 10_000;
/** 10 nodes × 2 lanes × 15 min: a job every ~2.5 s on every lane, with their lending rows. */
const CLUSTER_EVENTS = 12_000;
const TARGET_MS = 200;
const WIDTH = 1_400;
const T0 = 1_700_000_000_000;
const NODES = ['master', 'gpu-a', 'gpu-b'];

/** What a synthetic timeline covers: its nodes, its span, the share of image jobs, and who borrows from whom. */
export interface TimelineShape {
  nodes: string[];
  spanMs: number;
  imageShare: number;
  /** Helper node index → the owner node index it borrows for. */
  borrows: Map<number, number>;
}

/** The single-pair hour: a master, owner gpu-a and helper gpu-b. */
export const PAIR_HOUR: TimelineShape = {
  nodes: NODES,
  spanMs: 3_600_000,
  imageShare: 0.1,
  borrows: new Map([[2, 1]]),
};

/** Ten nodes, each with a text and an image lane, 15 minutes; every odd node helps the node before it. */
export const CLUSTER_QUARTER: TimelineShape = {
  nodes: Array.from({ length: 10 }, (_, i) => `gpu-${String(i + 1).padStart(2, '0')}`),
  spanMs: 900_000,
  imageShare: 0.5,
  borrows: new Map(Array.from({ length: 5 }, (_, i) => [2 * i + 1, 2 * i] as [number, number])),
};

/**
 * About `events` events over the shape's span from `t0`: 70% jobs (a share of the helpers' jobs borrowed, each with
 * its owner's copy and lent row), 5% loads, the rest lending rows (leases, grants, holds, returns, cut-offs), topped
 * up to exactly `events` events.
 */
export function syntheticTimeline(
  events: number,
  seed = 1,
  t0 = T0,
  shape: TimelineShape = PAIR_HOUR,
): { page: TimelinePageWire; decisions: DecisionRowWire[] } {
  const rand = seededRandom(seed);
  const span = shape.spanMs;
  const nodes = shape.nodes.map((nodeId) => ({
    nodeId,
    requests: [] as TimelineRequestWire[],
    loads: [] as TimelineLoadWire[],
    truncated: false,
  }));
  const pairs = [...shape.borrows].map(([h, o]) => ({ helper: shape.nodes[h], owner: shape.nodes[o] }));
  const decisions: DecisionRowWire[] = [];
  let id = 0;
  const decision = (
    at: number,
    nodeId: string,
    event: string,
    over: Partial<DecisionRowWire> = {},
    pair = pairs[0],
  ): DecisionRowWire => ({
    id: ++id,
    at,
    nodeId,
    routerVersion: '0.1.0',
    kind: 'dispatch',
    event,
    trigger: null,
    linkId: `L-${pair.owner}`,
    ownerNode: pair.owner,
    ownerModel: 'a',
    helperNode: pair.helper,
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
  const jobs = Math.round(events * 0.7);
  for (let i = 0; i < jobs; i++) {
    const ni = i % nodes.length;
    const n = nodes[ni];
    const finishedAt = Math.round(t0 + rand() * span);
    const durationMs = Math.round(50 + rand() * 2_000);
    const ownerIndex = shape.borrows.get(ni);
    const borrowed = ownerIndex !== undefined && rand() < 0.6;
    const requestId = `q${i}`;
    const owner = ownerIndex === undefined ? null : nodes[ownerIndex];
    const endpoint = rand() < shape.imageShare ? 'image' : 'chat';
    // An own image job runs the node's image model (its own lane); its text model's loads place the text jobs.
    const ownLocal = endpoint === 'image' ? `${n.nodeId}-image` : n.nodeId;
    const base: TimelineRequestWire = {
      id: ++id,
      finishedAt,
      nodeId: n.nodeId,
      model: borrowed ? 'model-b' : `model-${ownLocal}`,
      localId: borrowed ? 'b' : ownLocal,
      endpoint,
      streamed: false,
      queueWaitMs: Math.round(rand() * 200),
      durationMs,
      serviceMs: durationMs,
      outcome: 'ok',
      status: 200,
      requestId,
      lentFrom: borrowed ? `${owner!.nodeId}/a` : null,
    };
    n.requests.push(base);
    if (borrowed) {
      owner!.requests.push({ ...base, id: ++id, model: 'model-a' });
      decisions.push(
        decision(
          finishedAt - durationMs,
          owner!.nodeId,
          'lent',
          { requestId },
          { owner: owner!.nodeId, helper: n.nodeId },
        ),
      );
    }
  }
  for (let i = 0; i < events * 0.05; i++) {
    const n = nodes[i % nodes.length];
    n.loads.push({
      id: ++id,
      finishedAt: Math.round(t0 + rand() * span),
      nodeId: n.nodeId,
      model: 'm',
      localId: i % 2 ? 'x' : n.nodeId,
      lane: 'text',
      durationMs: Math.round(100 + rand() * 900),
      success: rand() > 0.05,
      displacedLocalId: i % 2 ? n.nodeId : 'x',
      error: null,
    });
  }
  const lendingEvents = ['lease_updated', 'lease_updated', 'granted', 'held_for_helper', 'returned', 'lease_cleared'];
  const pickPair = () => (pairs.length > 1 ? pairs[Math.floor(rand() * pairs.length)] : pairs[0]);
  while (decisions.length + jobs + Math.round(events * 0.05) < events) {
    const at = Math.round(t0 + rand() * span);
    const event = lendingEvents[Math.floor(rand() * lendingEvents.length)];
    const pair = pickPair();
    decisions.push(
      decision(
        at,
        event === 'granted' ? 'master' : pair.owner,
        event,
        {
          kind: event === 'granted' ? 'plan' : 'dispatch',
          outcome: event === 'granted' ? 'granted' : null,
          reason: event === 'returned' ? (rand() < 0.3 ? 'cut_off' : 'own_work_arrived') : null,
          details: event === 'lease_updated' ? { probe: rand() < 0.2, ttlMs: 5_000 } : null,
          slots: rand() < 0.5 ? 1 : 2,
        },
        pair,
      ),
    );
  }
  for (const n of nodes) n.requests.sort((a, b) => a.finishedAt - b.finishedAt);
  const page = { from: t0, to: t0 + span, nodes };
  // Renewals fold into one lease and clears end one: top up with holds (one event each) to the count asked for.
  for (let have = timelineEvents(page, decisions).length; have < events; have++) {
    const pair = pickPair();
    decisions.push(decision(Math.round(t0 + rand() * span), pair.owner, 'held_for_helper', { waitedMs: 100 }, pair));
  }
  return { page, decisions: decisions.sort((a, b) => b.at - a.at) };
}

interface Measured {
  name: string;
  events: number;
  rects: number;
  medianMs: number;
  maxMs: number;
}

function measure(name: string, reps: number, work: () => { events: number; rects: number }): Measured {
  for (let i = 0; i < 3; i++) work(); // warm-up: let the JIT settle
  const times: number[] = [];
  let last = { events: 0, rects: 0 };
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    last = work();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { name, ...last, medianMs: times[Math.floor(times.length / 2)], maxMs: times[times.length - 1] };
}

export const timelineLayoutBench: Benchmark = {
  name: 'timeline-layout',
  about: "the Lending tab's lease timeline: 10,000 events laid out (rows → events → rectangles), target ≤ 200 ms",
  async run(o: BenchOptions): Promise<BenchResult> {
    const reps = o.quick ? 5 : 21;
    const { page, decisions } = syntheticTimeline(EVENTS);
    const whole = { from: page.from, to: page.to };
    const zoomed = { from: page.from + 1_800_000, to: page.from + 1_860_000 };
    const results = [
      measure('whole hour (events + layout)', reps, () => {
        const events = timelineEvents(page, decisions);
        return { events: events.length, rects: layoutTimeline(events, whole, WIDTH).rects.length };
      }),
      measure('zoomed to 1 min (events + layout)', reps, () => {
        const events = timelineEvents(page, decisions);
        return { events: events.length, rects: layoutTimeline(events, zoomed, WIDTH).rects.length };
      }),
    ];
    const events = timelineEvents(page, decisions);
    const laid = layoutTimeline(events, whole, WIDTH);
    const relayout = measure('layout only (a pan or zoom step)', reps, () => ({
      events: events.length,
      rects: layoutTimeline(events, zoomed, WIDTH).rects.length,
    }));
    const hit = measure('hit test (one pointer move)', reps, () => ({
      events: events.length,
      rects: hitTest(laid, WIDTH / 2, laid.height / 2) === null ? 0 : 1,
    }));
    // The cluster at scale: 10 nodes × 2 lanes over 15 minutes (20 rows).
    const big = syntheticTimeline(CLUSTER_EVENTS, 1, T0, CLUSTER_QUARTER);
    const bigWhole = { from: big.page.from, to: big.page.to };
    const bigEvents = timelineEvents(big.page, big.decisions);
    const cluster = [
      measure('cluster 10 × 2 lanes, 15 min (events + layout)', reps, () => {
        const ev = timelineEvents(big.page, big.decisions);
        return { events: ev.length, rects: layoutTimeline(ev, bigWhole, WIDTH).rects.length };
      }),
      measure('cluster: layout only (a pan or zoom step)', reps, () => ({
        events: bigEvents.length,
        rects: layoutTimeline(bigEvents, { from: big.page.from + 300_000, to: big.page.from + 360_000 }, WIDTH).rects
          .length,
      })),
    ];
    o.log(`timeline-layout: ${events.length} + ${bigEvents.length} events measured`);
    const all = [...results, relayout, hit, ...cluster];
    const rows: Cell[][] = all.map((m) => [
      m.name,
      m.events,
      m.rects,
      formatNumber(m.medianMs, 2),
      formatNumber(m.maxMs, 2),
      formatRatio(ratio(m.medianMs, TARGET_MS)),
    ]);
    const head = results[0];
    return {
      tables: [
        {
          title: `timeline-layout: the lease timeline's view-model over ${events.length} events of 3 nodes in an hour, and ${bigEvents.length} of 10 nodes × 2 lanes in 15 min (${WIDTH} px wide), median of ${reps}`,
          columns: ['what', 'events', 'rectangles', 'median ms', 'max ms', '÷ 200 ms target'],
          rows,
          notes: [
            "events: jobs (a fifth borrowed, with their owner's copies and lent rows), loads, leases, grants, holds, returns, cut-offs;",
            'the canvas then paints one fillRect per rectangle; ratios below 1.00× meet the target.',
          ],
        },
      ],
      summary: [
        {
          benchmark: 'timeline-layout',
          measure: `ms to lay out ${head.events} events`,
          value: formatNumber(head.medianMs, 1),
          ratio: ratio(head.medianMs, TARGET_MS),
          against: 'the 200 ms target',
        },
        {
          benchmark: 'timeline-layout',
          measure: `ms to lay out ${cluster[0].events} events of 10 nodes × 2 lanes`,
          value: formatNumber(cluster[0].medianMs, 1),
          ratio: ratio(cluster[0].medianMs, TARGET_MS),
          against: 'the 200 ms target',
        },
      ],
    };
  },
};

/**
 * timeline-layout: the Lending tab's lease timeline laid out for 10,000 events (≤ 200 ms), in Node — the
 * pure view-model the canvas paints (src-renderer/src/lending/timeline-events.ts and timeline-layout.ts, shared with
 * the renderer like contract/): synthetic analytics and decision rows of 3 nodes → events → rows, rectangles and
 * ticks, for the whole range and a zoomed-in viewport; and one hit test. Reports the median of several repetitions
 * and its ratio to the 200 ms target. The painting itself is a loop of fillRect calls over what this returns.
 */
import type { DecisionRowWire, TimelineLoadWire, TimelinePageWire, TimelineRequestWire } from '../contract';
import { timelineEvents } from '../../src-renderer/src/lending/timeline-events';
import { hitTest, layoutTimeline } from '../../src-renderer/src/lending/timeline-layout';
import { formatNumber, formatRatio, ratio, type Cell } from './table';
import type { Benchmark, BenchOptions, BenchResult } from './types';
import { seededRandom } from '../seeded-random';

const EVENTS = 10_000;
const TARGET_MS = 200;
const WIDTH = 1_400;
const T0 = 1_700_000_000_000;
const NODES = ['master', 'gpu-a', 'gpu-b'];


/**
 * About `events` events over the hour from `t0`: 70% jobs (a fifth of them borrowed, each with its owner's copy and lent row),
 * 5% loads, the rest lending rows (leases, grants, holds, returns, cut-offs), topped up to exactly `events` events.
 */
export function syntheticTimeline(events: number, seed = 1, t0 = T0): { page: TimelinePageWire; decisions: DecisionRowWire[] } {
  const rand = seededRandom(seed);
  const span = 3_600_000;
  const nodes = NODES.map((nodeId) => ({ nodeId, requests: [] as TimelineRequestWire[], loads: [] as TimelineLoadWire[], truncated: false }));
  const decisions: DecisionRowWire[] = [];
  let id = 0;
  const decision = (at: number, nodeId: string, event: string, over: Partial<DecisionRowWire> = {}): DecisionRowWire => ({
    id: ++id, at, nodeId, routerVersion: '0.1.0', kind: 'dispatch', event, trigger: null, linkId: 'L', ownerNode: 'gpu-a', ownerModel: 'a', helperNode: 'gpu-b', helperModel: 'b',
    held: null, backlog: null, ownerDrainMs: null, helperSwitchMs: null, helperServiceMs: null, serviceSource: null, helperIdleMs: null, outcome: null, reason: null, slots: 2,
    requestsOut: 1, ownerPredictedFinishMs: null, ownerJobMs: null, helperJobMs: null, waitedMs: null, borrowedInBackend: null, requestId: null, details: null, ...over,
  });
  const jobs = Math.round(events * 0.7);
  for (let i = 0; i < jobs; i++) {
    const n = nodes[i % nodes.length];
    const finishedAt = Math.round(t0 + rand() * span);
    const durationMs = Math.round(50 + rand() * 2_000);
    const borrowed = n.nodeId === 'gpu-b' && rand() < 0.6;
    const requestId = `q${i}`;
    const base: TimelineRequestWire = {
      id: ++id, finishedAt, nodeId: n.nodeId, model: borrowed ? 'model-b' : `model-${n.nodeId}`, localId: borrowed ? 'b' : n.nodeId, endpoint: rand() < 0.1 ? 'image' : 'chat',
      streamed: false, queueWaitMs: Math.round(rand() * 200), durationMs, serviceMs: durationMs, outcome: 'ok', status: 200, requestId, lentFrom: borrowed ? 'gpu-a/a' : null,
    };
    n.requests.push(base);
    if (borrowed) {
      nodes[1].requests.push({ ...base, id: ++id, model: 'model-a' });
      decisions.push(decision(finishedAt - durationMs, 'gpu-a', 'lent', { requestId }));
    }
  }
  for (let i = 0; i < events * 0.05; i++) {
    const n = nodes[i % nodes.length];
    n.loads.push({ id: ++id, finishedAt: Math.round(t0 + rand() * span), nodeId: n.nodeId, model: 'm', localId: i % 2 ? 'x' : n.nodeId, lane: 'text', durationMs: Math.round(100 + rand() * 900), success: rand() > 0.05, displacedLocalId: i % 2 ? n.nodeId : 'x', error: null });
  }
  const lendingEvents = ['lease_updated', 'lease_updated', 'granted', 'held_for_helper', 'returned', 'lease_cleared'];
  while (decisions.length + jobs + Math.round(events * 0.05) < events) {
    const at = Math.round(t0 + rand() * span);
    const event = lendingEvents[Math.floor(rand() * lendingEvents.length)];
    decisions.push(decision(at, event === 'granted' ? 'master' : 'gpu-a', event, {
      kind: event === 'granted' ? 'plan' : 'dispatch', outcome: event === 'granted' ? 'granted' : null, reason: event === 'returned' ? (rand() < 0.3 ? 'cut_off' : 'own_work_arrived') : null,
      details: event === 'lease_updated' ? { probe: rand() < 0.2, ttlMs: 5_000 } : null, slots: rand() < 0.5 ? 1 : 2,
    }));
  }
  for (const n of nodes) n.requests.sort((a, b) => a.finishedAt - b.finishedAt);
  const page = { from: t0, to: t0 + span, nodes };
  // Renewals fold into one lease and clears end one: top up with holds (one event each) to the count asked for.
  for (let have = timelineEvents(page, decisions).length; have < events; have++) decisions.push(decision(Math.round(t0 + rand() * span), 'gpu-a', 'held_for_helper', { waitedMs: 100 }));
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
  about: 'the Lending tab\'s lease timeline: 10,000 events laid out (rows → events → rectangles), target ≤ 200 ms',
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
    const relayout = measure('layout only (a pan or zoom step)', reps, () => ({ events: events.length, rects: layoutTimeline(events, zoomed, WIDTH).rects.length }));
    const hit = measure('hit test (one pointer move)', reps, () => ({ events: events.length, rects: hitTest(laid, WIDTH / 2, laid.height / 2) === null ? 0 : 1 }));
    o.log(`timeline-layout: ${events.length} events measured`);
    const all = [...results, relayout, hit];
    const rows: Cell[][] = all.map((m) => [m.name, m.events, m.rects, formatNumber(m.medianMs, 2), formatNumber(m.maxMs, 2), formatRatio(ratio(m.medianMs, TARGET_MS))]);
    const head = results[0];
    return {
      tables: [{
        title: `timeline-layout: the lease timeline's view-model over ${events.length} events of 3 nodes (${WIDTH} px wide), median of ${reps}`,
        columns: ['what', 'events', 'rectangles', 'median ms', 'max ms', '÷ 200 ms target'],
        rows,
        notes: ['events: jobs (a fifth borrowed, with their owner\'s copies and lent rows), loads, leases, grants, holds, returns, cut-offs;', 'the canvas then paints one fillRect per rectangle; ratios below 1.00× meet the target.'],
      }],
      summary: [{ benchmark: 'timeline-layout', measure: `ms to lay out ${head.events} events`, value: formatNumber(head.medianMs, 1), ratio: ratio(head.medianMs, TARGET_MS), against: 'the 200 ms target' }],
    };
  },
};

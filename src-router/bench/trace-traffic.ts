/**
 * The lending trace's traffic (pure, seeded): minutes of recorded-looking requests on several nodes, compressed in
 * time. Each node has its own steady traffic (arrivals at a rate that alternates between busy stretches and lulls,
 * minute by minute of the recording) over its own models, and bursts: a batch of requests to one model arriving
 * within about a second. Works are max_tokens (text) or steps (image); some text requests stream.
 */
import { seededRandom } from '../seeded-random';

export type TraceLane = 'text' | 'image';

export interface TraceModel {
  /** Public ID. */
  model: string;
  lane: TraceLane;
  /** Share of the node's own traffic. */
  weight: number;
  /** Work range [min, max]: tokens or steps. */
  work: [number, number];
}

export interface TraceNode {
  id: string;
  own: TraceModel[];
  /** Mean gap between own requests in the recording, ms. */
  meanGapMs: number;
  /** Bursts in the recording: each `size` requests for `model` in about a second of the compressed trace. */
  bursts: { model: string; lane: TraceLane; size: number; work: [number, number] }[];
}

export interface TraceOptions {
  seed: number;
  nodes: TraceNode[];
  /** Length of the recording, ms. */
  recordedMs: number;
  /** Recorded time ÷ replayed time. */
  compress: number;
  /** Share of text requests that stream. */
  streamShare?: number;
}

export interface TraceRequest {
  /** Offset in the replay, ms. */
  atMs: number;
  node: string;
  kind: 'own' | 'burst';
  /** Index of the burst (over the whole trace) for burst requests. */
  burst: number | null;
  model: string;
  lane: TraceLane;
  work: number;
  stream: boolean;
}

const MINUTE = 60_000;

/** The replayed requests in arrival order; the same options always give the same trace. */
export function traceRequests(o: TraceOptions): TraceRequest[] {
  const rand = seededRandom(o.seed);
  const streamShare = o.streamShare ?? 0.3;
  const between = (r: [number, number]) => r[0] + Math.floor(rand() * (r[1] - r[0] + 1));
  const out: TraceRequest[] = [];
  let burstIndex = 0;
  for (const n of o.nodes) {
    // Busy stretches and lulls: each recorded minute runs at 1.6× or 0.3× the node's mean rate.
    const minutes = Math.ceil(o.recordedMs / MINUTE);
    const factor = Array.from({ length: minutes }, () => (rand() < 0.55 ? 1.6 : 0.3));
    const total = n.own.reduce((a, m) => a + m.weight, 0);
    for (let t = 0; ; ) {
      const f = factor[Math.min(minutes - 1, Math.floor(t / MINUTE))];
      t += (-Math.log(1 - rand()) * n.meanGapMs) / f;
      if (t >= o.recordedMs) break;
      let pickAt = rand() * total;
      const m = n.own.find((x) => (pickAt -= x.weight) < 0) ?? n.own[n.own.length - 1];
      out.push({
        atMs: t / o.compress,
        node: n.id,
        kind: 'own',
        burst: null,
        model: m.model,
        lane: m.lane,
        work: between(m.work),
        stream: m.lane === 'text' && rand() < streamShare,
      });
    }
    // Bursts start within the first 85% of the recording, so the last one ends inside the trace.
    for (const b of n.bursts) {
      const at = (0.05 + 0.8 * rand()) * (o.recordedMs / o.compress);
      for (let i = 0; i < b.size; i++) {
        out.push({
          atMs: at + rand() * 1_000,
          node: n.id,
          kind: 'burst',
          burst: burstIndex,
          model: b.model,
          lane: b.lane,
          work: between(b.work),
          stream: b.lane === 'text' && rand() < streamShare,
        });
      }
      burstIndex++;
    }
  }
  return out.sort((a, b) => a.atMs - b.atMs || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
}

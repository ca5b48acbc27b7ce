/**
 * Cost fits (PRICE-2, PRICE-4): pure functions over a model's own analytics rows. No IO, no clock of their own:
 * the caller passes `now`.
 */
import type { LoadRow, RequestRow } from '../store';

/** Lanes that have a cost model (LINK-2: image and LLM links each keep their own). */
export type CostLane = 'image' | 'text';

/**
 * A model's measured cost per job (PRICE-2), fitted by the node from its own analytics.
 * `scaled`: varying work, duration = interceptMs + slopeMsPerWork × work.
 * `constant`: every sample did the same work: meanMs prices exactly that work; any other work is unpriced.
 * (Defined here because `costs/` sits above `lending/`; `lending/types.ts` re-exports it under the same name.)
 */
export type CostFit =
  | { kind: 'scaled'; interceptMs: number; slopeMsPerWork: number; samples: number }
  | { kind: 'constant'; work: number; meanMs: number; samples: number };

export interface CostSample {
  work: number;
  durationMs: number;
}

const usable = (s: CostSample) =>
  Number.isFinite(s.work) && s.work >= 0 && Number.isFinite(s.durationMs) && s.durationMs >= 0;

/**
 * PRICE-2: null below `minSamples`. Every sample the same work → a constant fit for that work only.
 * Varying work → least squares, clamped so that no work is ever predicted to take negative time:
 * - a negative slope (bigger jobs measured faster: noise) is flattened to the mean duration;
 * - a negative intercept (small jobs would come out negative) is refitted through the origin.
 */
export function fitCost(samples: CostSample[], minSamples: number): CostFit | null {
  const xs = samples.filter(usable);
  const n = xs.length;
  if (n === 0 || n < minSamples) return null;
  const meanW = xs.reduce((a, s) => a + s.work, 0) / n;
  const meanD = xs.reduce((a, s) => a + s.durationMs, 0) / n;
  if (xs.every((s) => s.work === xs[0].work)) return { kind: 'constant', work: xs[0].work, meanMs: meanD, samples: n };
  let sxx = 0;
  let sxy = 0;
  for (const s of xs) {
    sxx += (s.work - meanW) ** 2;
    sxy += (s.work - meanW) * (s.durationMs - meanD);
  }
  const slope = sxy / sxx;
  if (!(slope > 0)) return { kind: 'scaled', interceptMs: meanD, slopeMsPerWork: 0, samples: n };
  const intercept = meanD - slope * meanW;
  if (intercept >= 0) return { kind: 'scaled', interceptMs: intercept, slopeMsPerWork: slope, samples: n };
  const sww = xs.reduce((a, s) => a + s.work * s.work, 0);
  const swd = xs.reduce((a, s) => a + s.work * s.durationMs, 0);
  return { kind: 'scaled', interceptMs: 0, slopeMsPerWork: sww > 0 ? swd / sww : 0, samples: n };
}

/** Predicted duration of one job of `work`; a constant fit prices only its own work (other sizes: null). */
export function predict(fit: CostFit | null, work: number): number | null {
  if (!fit || !Number.isFinite(work) || work < 0) return null;
  if (fit.kind === 'constant') return work === fit.work ? fit.meanMs : null;
  return Math.max(0, fit.interceptMs + fit.slopeMsPerWork * work);
}

/** The work measure of a finished request for a lane (text: tokens generated; image: pixels × steps × count). */
export function requestWork(row: RequestRow, lane: CostLane): number | null {
  if (lane === 'text') {
    if (row.endpoint !== 'chat' && row.endpoint !== 'completion') return null;
    return typeof row.tokensGenerated === 'number' ? row.tokensGenerated : null;
  }
  if (row.endpoint !== 'image') return null;
  const { imagePixels: p, imageSteps: s, imageCount: c } = row;
  return typeof p === 'number' && typeof s === 'number' && typeof c === 'number' ? p * s * c : null;
}

export interface AnalyticsFitOptions {
  now: number;
  /** cluster.scheduling_sample_window */
  windowMs: number;
  /** cluster.scheduling_min_samples */
  minSamples: number;
  lane: CostLane;
}

/**
 * The time one finished request cost its engine (PRICE-2): its service time — the engine's time on that job alone,
 * with no wait in the router queue, for the lane, for a load or behind another job inside the engine. Rows written
 * before service times were measured (source null) fall back to duration minus the lane wait; a row whose service
 * time could not be measured (`unknown`: a cancellation on the runtime hid the previous job's end) is no sample.
 */
export function serviceSampleMs(row: RequestRow): number | null {
  if (typeof row.serviceMs === 'number' && Number.isFinite(row.serviceMs)) return Math.max(0, row.serviceMs);
  if (row.serviceSource === null || row.serviceSource === undefined)
    return Math.max(0, row.durationMs - (row.queueWaitMs ?? 0));
  return null;
}

/**
 * A model's own fit from its request rows (the caller passes the rows of that one model config).
 * Successful rows finished inside the window, with a work measure for the lane and a service time: loads are
 * priced on their own (PRICE-4), and waiting inside the engine behind another job is not this job's work.
 */
export function fitFromAnalytics(rows: RequestRow[], o: AnalyticsFitOptions): CostFit | null {
  const from = o.now - o.windowMs;
  const samples: CostSample[] = [];
  for (const r of rows) {
    if (r.outcome !== 'ok' || r.finishedAt < from) continue;
    const work = requestWork(r, o.lane);
    const durationMs = serviceSampleMs(r);
    if (work === null || durationMs === null) continue;
    samples.push({ work, durationMs });
  }
  return fitCost(samples, o.minSamples);
}

/**
 * PRICE-4: mean of every successful load of the model (the caller passes that model config's load rows),
 * including loads never followed by a generation; null when it was never loaded successfully.
 */
export function loadCost(loads: LoadRow[]): number | null {
  const ok = loads.filter((l) => l.success && Number.isFinite(l.durationMs) && l.durationMs >= 0);
  return ok.length ? ok.reduce((a, l) => a + l.durationMs, 0) / ok.length : null;
}

import type { PodSnapshot, RouterMetricName } from './metrics';

/**
 * Weightable scorers (ROUTE-3): each turns the candidate pods into scores normalised to [0,1], 1 = best.
 * Pure; a scorer is only called when every candidate has the metrics it requires.
 */

export const MULTI_SCORERS = ['least-request', 'least-kv-cache', 'prefix-affinity'] as const;
export type ScorerName = (typeof MULTI_SCORERS)[number];

export interface ScoreContext {
  /** The pod that last served this request's prompt prefix, if the router remembers one. */
  prefixPod?: string;
}

export interface Scorer {
  name: ScorerName;
  requires: readonly RouterMetricName[];
  score(pods: readonly PodSnapshot[], ctx: ScoreContext): number[];
}

/** Min-max normalisation where lower raw values are better: min → 1, max → 0; all equal → all 1. */
export function normalizeLowerBetter(raw: readonly number[]): number[] {
  const min = Math.min(...raw);
  const max = Math.max(...raw);
  return raw.map((x) => (max === min ? 1 : (max - x) / (max - min)));
}

export const SCORERS: Readonly<Record<ScorerName, Scorer>> = {
  'least-request': {
    name: 'least-request',
    requires: ['num_requests_running', 'num_requests_waiting'],
    score: (pods) =>
      normalizeLowerBetter(pods.map((p) => p.metrics!.num_requests_running! + p.metrics!.num_requests_waiting!)),
  },
  'least-kv-cache': {
    name: 'least-kv-cache',
    requires: ['kv_cache_usage', 'kv_cache_usage_cpu'],
    score: (pods) => normalizeLowerBetter(pods.map((p) => p.metrics!.kv_cache_usage! + p.metrics!.kv_cache_usage_cpu!)),
  },
  'prefix-affinity': {
    name: 'prefix-affinity',
    requires: [],
    score: (pods, ctx) => pods.map((p) => (p.id === ctx.prefixPod ? 1 : 0)),
  },
};

export function isScorerName(name: string): name is ScorerName {
  return (MULTI_SCORERS as readonly string[]).includes(name);
}

export interface WeightedScorer {
  name: ScorerName;
  weight: number;
}

/** Σ weight × normalised score per pod. */
export function combineScores(
  pods: readonly PodSnapshot[],
  scorers: readonly WeightedScorer[],
  ctx: ScoreContext,
): number[] {
  const total = pods.map(() => 0);
  for (const { name, weight } of scorers) {
    SCORERS[name].score(pods, ctx).forEach((s, i) => (total[i] += weight * s));
  }
  return total;
}

/** The union of the scorers' required metrics, in first-seen order. */
export function scorersRequire(scorers: readonly WeightedScorer[]): RouterMetricName[] {
  return [...new Set(scorers.flatMap((s) => SCORERS[s.name].requires))];
}

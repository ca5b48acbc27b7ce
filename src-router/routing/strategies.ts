import type { PodSnapshot, RouterMetricName } from './metrics';
import { missingMetrics } from './metrics';
import { DEFAULT_MULTI_SPEC, parseMultiSpec } from './multi-spec';
import { PrefixTable } from './prefix-table';
import { combineScores, MULTI_SCORERS, SCORERS, scorersRequire, type WeightedScorer } from './scorers';

/**
 * The strategy registry and the pure pick (ROUTE-1..3). `pick` sees a snapshot of the candidate pods and the
 * caller-owned PickState (RNG, round-robin cursors, prefix table); it does no IO.
 */

export type StrategyName = 'random' | 'round-robin' | 'least-request' | 'least-kv-cache' | 'prefix-affinity' | 'multi';

export interface StrategyInfo {
  name: StrategyName;
  label: string;
  /** Scraped router metrics the strategy needs to score at all; [] = it routes from what the router observes. */
  requires: RouterMetricName[];
  weightable: boolean;
}

/** A validated strategy: its text as published and the weighted scorers it runs. */
export interface ParsedStrategy {
  spec: string;
  name: StrategyName;
  /** least-request / least-kv-cache: that scorer at weight 1; multi: the spec's pairs; otherwise []. */
  scorers: WeightedScorer[];
}

const defaultMulti = parseMultiSpec(DEFAULT_MULTI_SPEC);

export const STRATEGIES: readonly StrategyInfo[] = [
  { name: 'random', label: 'random', requires: [], weightable: false },
  { name: 'round-robin', label: 'round-robin', requires: [], weightable: false },
  { name: 'least-request', label: 'least request', requires: [...SCORERS['least-request'].requires], weightable: true },
  {
    name: 'least-kv-cache',
    label: 'least KV cache',
    requires: [...SCORERS['least-kv-cache'].requires],
    weightable: true,
  },
  { name: 'prefix-affinity', label: 'prefix affinity', requires: [], weightable: true },
  // The exact need of a multi spec is requiresOf(spec); the list shows what the seeded default spec needs.
  {
    name: 'multi',
    label: 'multi (weighted)',
    requires: defaultMulti.ok ? scorersRequire(defaultMulti.scorers) : [],
    weightable: false,
  },
];

export const MULTI_SCORER_NAMES: readonly string[] = MULTI_SCORERS;

/** The scraped metrics a validated strategy needs. */
export function requiresOf(strategy: ParsedStrategy): RouterMetricName[] {
  return scorersRequire(strategy.scorers);
}

export interface PickState {
  /** [0, 1), like Math.random. */
  rng: () => number;
  /** Round-robin position per group (public model ID). */
  cursors: Map<string, number>;
  prefixes: PrefixTable;
}

export function createPickState(opts: { rng?: () => number; prefixCapacity?: number } = {}): PickState {
  return { rng: opts.rng ?? Math.random, cursors: new Map(), prefixes: new PrefixTable(opts.prefixCapacity) };
}

export interface PickRequest {
  /** The set the pods belong to (public model ID): keys round-robin cursors and prefixes. */
  group?: string;
  prefixHash?: string;
}

export interface PickResult {
  /** undefined when no pod is ready. */
  pod: PodSnapshot | undefined;
  /** The strategy could not score (required metrics missing) and a random ready pod was taken (ROUTE-2). */
  fallback: boolean;
  reason?: string;
  /** With fallback: the required metrics some candidate lacked. */
  missing?: RouterMetricName[];
}

function randomOf<T>(items: readonly T[], rng: () => number): T {
  return items[Math.min(items.length - 1, Math.floor(rng() * items.length))];
}

/** The best-scoring pods (within rounding), one taken at random. */
function bestOf(pods: readonly PodSnapshot[], scores: readonly number[], rng: () => number): PodSnapshot {
  const top = Math.max(...scores);
  return randomOf(
    pods.filter((_, i) => scores[i] >= top - 1e-9),
    rng,
  );
}

function prefixKey(req: PickRequest): string | undefined {
  return req.prefixHash === undefined ? undefined : `${req.group ?? ''}\u0000${req.prefixHash}`;
}

/** Picks a pod among the ready ones, remembering which pod took the request's prompt prefix. */
export function pick(
  strategy: ParsedStrategy,
  pods: readonly PodSnapshot[],
  request: PickRequest,
  state: PickState,
): PickResult {
  const ready = pods.filter((p) => p.ready);
  if (!ready.length) return { pod: undefined, fallback: false, reason: 'no ready pod' };
  const key = prefixKey(request);
  const result = choose(strategy, ready, key === undefined ? undefined : state.prefixes.get(key), request, state);
  if (key !== undefined && result.pod) state.prefixes.remember(key, result.pod.id);
  return result;
}

function choose(
  strategy: ParsedStrategy,
  ready: PodSnapshot[],
  prefixPod: string | undefined,
  request: PickRequest,
  state: PickState,
): PickResult {
  switch (strategy.name) {
    case 'random':
      return { pod: randomOf(ready, state.rng), fallback: false };
    case 'round-robin': {
      const group = request.group ?? '';
      const i = state.cursors.get(group) ?? 0;
      state.cursors.set(group, i + 1);
      return { pod: ready[i % ready.length], fallback: false };
    }
    case 'prefix-affinity': {
      const sticky = ready.find((p) => p.id === prefixPod);
      if (sticky) return { pod: sticky, fallback: false };
      const least = Math.min(...ready.map((p) => p.inflight));
      return {
        pod: randomOf(
          ready.filter((p) => p.inflight === least),
          state.rng,
        ),
        fallback: false,
      };
    }
    default:
      return scored(strategy, ready, prefixPod, state);
  }
}

/** Scorer strategies: every candidate must have every required metric, else a random ready pod (ROUTE-2). */
function scored(
  strategy: ParsedStrategy,
  ready: PodSnapshot[],
  prefixPod: string | undefined,
  state: PickState,
): PickResult {
  const required = requiresOf(strategy);
  const lacking = ready.filter((p) => missingMetrics(p.metrics, required).length > 0);
  if (lacking.length) {
    const missing = [...new Set(lacking.flatMap((p) => missingMetrics(p.metrics, required)))];
    const reason = `${strategy.spec}: ${missing.join(', ')} not scraped for ${lacking.map((p) => p.id).join(', ')}; random ready pod`;
    return { pod: randomOf(ready, state.rng), fallback: true, reason, missing };
  }
  return { pod: bestOf(ready, combineScores(ready, strategy.scorers, { prefixPod }), state.rng), fallback: false };
}

/**
 * The router metrics a strategy scores with (ROUTE-2, ROUTE-4), as a profile maps them from an engine's /metrics.
 * Absent stays absent: a metric the profile could not read is left out, never filled with zero.
 */

/** A cumulative Prometheus histogram: `le` upper bounds ascending (the last is Infinity) with cumulative counts. */
export interface HistogramValue {
  buckets: { le: number; count: number }[];
  sum: number;
  count: number;
}

export interface RouterMetrics {
  /** Requests the engine runs now. */
  num_requests_running?: number;
  /** Requests waiting at the engine for a slot. */
  num_requests_waiting?: number;
  /** GPU (or main) KV cache usage, 0..1. */
  kv_cache_usage?: number;
  /** Host-offload (CPU) KV cache usage, 0..1. */
  kv_cache_usage_cpu?: number;
  /** Seconds requests waited in the engine's queue (lifetime histogram). */
  queue_wait_seconds?: HistogramValue;
}

export type RouterMetricName = keyof RouterMetrics;

export const ROUTER_METRIC_NAMES: readonly RouterMetricName[] = [
  'num_requests_running',
  'num_requests_waiting',
  'kv_cache_usage',
  'kv_cache_usage_cpu',
  'queue_wait_seconds',
];

/** The metric names of `required` that `metrics` lacks (all of them when there are no metrics). */
export function missingMetrics(
  metrics: RouterMetrics | undefined,
  required: readonly RouterMetricName[],
): RouterMetricName[] {
  return required.filter((name) => metrics?.[name] === undefined);
}

/**
 * The q-quantile of a cumulative histogram, interpolated linearly inside the bucket as Prometheus'
 * `histogram_quantile` does; undefined with no observations. A quantile in the +Inf bucket answers the highest
 * finite bound.
 */
export function histogramQuantile(h: HistogramValue, q: number): number | undefined {
  if (!h.count || !h.buckets.length || !(q >= 0 && q <= 1)) return undefined;
  const rank = q * h.count;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of h.buckets) {
    if (b.count >= rank) {
      if (b.le === Infinity) return prevLe;
      const inBucket = b.count - prevCount;
      return inBucket > 0 ? prevLe + ((b.le - prevLe) * (rank - prevCount)) / inBucket : b.le;
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}

/** One pod a strategy can pick: a local replica or a static-route endpoint. */
export interface PodSnapshot {
  id: string;
  /** Eligible to take a request now (a lazily started local engine that is not failed counts as ready). */
  ready: boolean;
  /** Requests the router itself has in flight at this pod (observed, never scraped). */
  inflight: number;
  /** The latest fresh scrape through the pod's profile; absent when never scraped or stale. */
  metrics?: RouterMetrics;
}

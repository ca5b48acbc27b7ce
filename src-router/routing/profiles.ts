import type { HistogramValue, RouterMetricName, RouterMetrics } from './metrics';
import type { PromFamily } from './prom-parse';

/**
 * Metric profiles (ROUTE-4): which engine /metrics names the scraper reads for a pod, mapped to router metrics.
 * Pure. A name the engine does not publish stays absent; a profile reads nothing it is not sure of.
 */

export type ProfileName = 'clutch-layers' | 'vllm' | 'llama.cpp' | 'default';

export interface MetricProfile {
  name: ProfileName;
  /** Engine metric families the profile reads (documentation and tests). */
  reads: readonly string[];
  /** The router metrics it can fill when the engine publishes every name it reads; a strategy needing others stays cold (random). */
  provides: readonly RouterMetricName[];
  map(families: FamilyIndex): RouterMetrics;
}

/** Parsed families by name. */
export type FamilyIndex = ReadonlyMap<string, PromFamily>;

export function indexFamilies(families: readonly PromFamily[]): FamilyIndex {
  return new Map(families.map((f) => [f.name, f]));
}

/** Sum of a counter/gauge/untyped family over its label sets; undefined when absent or not a finite number. */
export function gaugeValue(families: FamilyIndex, name: string): number | undefined {
  const f = families.get(name);
  if (!f || f.type === 'histogram' || f.type === 'summary' || !f.samples.length) return undefined;
  const total = f.samples.reduce((s, m) => s + m.value, 0);
  return Number.isFinite(total) ? total : undefined;
}

/** A histogram family, its label sets merged (bucket counts, sums and counts added). */
export function histogramValue(families: FamilyIndex, name: string): HistogramValue | undefined {
  const f = families.get(name);
  if (!f || f.type !== 'histogram' || !f.samples.length) return undefined;
  const byLe = new Map<number, number>();
  let sum = 0;
  let count = 0;
  for (const { histogram: h } of f.samples) {
    for (const b of h.buckets) byLe.set(b.le, (byLe.get(b.le) ?? 0) + b.count);
    sum += h.sum;
    count += h.count;
  }
  if (!Number.isFinite(count)) return undefined;
  const buckets = [...byLe].map(([le, c]) => ({ le, count: c })).sort((a, b) => a.le - b.le);
  return { buckets, sum, count };
}

/** Drops absent entries so `'x' in metrics` means the profile read it. */
function present(m: RouterMetrics): RouterMetrics {
  return Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined)) as RouterMetrics;
}

/** A 0..1 ratio, or undefined when it is not one. */
function ratio(v: number | undefined): number | undefined {
  return v !== undefined && v >= 0 && v <= 1 ? v : undefined;
}

const CLUTCH = {
  running: 'clutch_active_slots',
  waiting: 'clutch_queue_depth',
  kvUsed: 'clutch_kv_pages_used',
  kvFree: 'clutch_kv_pages_free',
  queueWait: 'clutch_queue_wait_seconds',
} as const;

/**
 * clutch-layers exactly per ROUTE-4: kv = used ÷ (used + free), absent when either is absent or the total is 0;
 * CPU KV is the constant 0 (no host-offload KV cache; the row keeps least-kv-cache from skipping the pod).
 * Prefix-cache counters, prefill/decode histograms, throughput gauges and busy time are not read.
 */
export const clutchLayersProfile: MetricProfile = {
  name: 'clutch-layers',
  reads: Object.values(CLUTCH),
  provides: [
    'num_requests_running',
    'num_requests_waiting',
    'kv_cache_usage',
    'kv_cache_usage_cpu',
    'queue_wait_seconds',
  ],
  map(f) {
    const used = gaugeValue(f, CLUTCH.kvUsed);
    const free = gaugeValue(f, CLUTCH.kvFree);
    const total = used !== undefined && free !== undefined ? used + free : 0;
    return present({
      num_requests_running: gaugeValue(f, CLUTCH.running),
      num_requests_waiting: gaugeValue(f, CLUTCH.waiting),
      kv_cache_usage: total > 0 ? ratio(used! / total) : undefined,
      kv_cache_usage_cpu: 0,
      queue_wait_seconds: histogramValue(f, CLUTCH.queueWait),
    });
  },
};

const VLLM = {
  running: 'vllm:num_requests_running',
  waiting: 'vllm:num_requests_waiting',
  kv: 'vllm:kv_cache_usage_perc',
  queueTime: 'vllm:request_queue_time_seconds',
} as const;

/**
 * vLLM as current (V1) builds export it: `kv_cache_usage_perc` is a 0..1 ratio of the one KV pool (the V0 names
 * `gpu_cache_usage_perc` and `cpu_cache_usage_perc` are gone, and V1 has no CPU swap pool), so CPU KV is 0 when the
 * ratio is published.
 */
function mapVllm(f: FamilyIndex): RouterMetrics {
  const kv = ratio(gaugeValue(f, VLLM.kv));
  return present({
    num_requests_running: gaugeValue(f, VLLM.running),
    num_requests_waiting: gaugeValue(f, VLLM.waiting),
    kv_cache_usage: kv,
    kv_cache_usage_cpu: kv !== undefined ? 0 : undefined,
    queue_wait_seconds: histogramValue(f, VLLM.queueTime),
  });
}

const VLLM_PROVIDES: readonly RouterMetricName[] = [
  'num_requests_running',
  'num_requests_waiting',
  'kv_cache_usage',
  'kv_cache_usage_cpu',
  'queue_wait_seconds',
];

export const vllmProfile: MetricProfile = {
  name: 'vllm',
  reads: Object.values(VLLM),
  provides: VLLM_PROVIDES,
  map: mapVllm,
};

const LLAMACPP = {
  running: 'llamacpp:requests_processing',
  waiting: 'llamacpp:requests_deferred',
} as const;

/**
 * llama-server (`--metrics`), as current builds export it: the two scheduler gauges. There is no KV-usage gauge any
 * more (`llamacpp:kv_cache_usage_ratio` is gone) and no queue-time histogram, so KV strategies stay cold (random) for
 * such pods rather than read a name that does not exist.
 */
export const llamaCppProfile: MetricProfile = {
  name: 'llama.cpp',
  reads: Object.values(LLAMACPP),
  provides: ['num_requests_running', 'num_requests_waiting'],
  map(f) {
    return present({
      num_requests_running: gaugeValue(f, LLAMACPP.running),
      num_requests_waiting: gaugeValue(f, LLAMACPP.waiting),
    });
  },
};

/**
 * The module default, for a model with no engine set (or an engine label no profile knows): the vLLM naming the
 * module was built around. It never reads clutch-layers names, so metric strategies fall back to random for
 * clutch-layers pods without `engine: clutch-layers`.
 */
export const defaultProfile: MetricProfile = {
  name: 'default',
  reads: vllmProfile.reads,
  provides: VLLM_PROVIDES,
  map: mapVllm,
};

export const PROFILES: Readonly<Record<ProfileName, MetricProfile>> = {
  'clutch-layers': clutchLayersProfile,
  vllm: vllmProfile,
  'llama.cpp': llamaCppProfile,
  default: defaultProfile,
};

/** Profiles an operator may publish as `routes_engine` (ROUTE-5: the console sets only clutch-layers). */
export const SETTABLE_ROUTES_ENGINES: readonly ProfileName[] = ['clutch-layers'];

export function isProfileName(name: string): name is ProfileName {
  return Object.hasOwn(PROFILES, name);
}

/** The profile for an engine label; no label or an unknown one → the module default. */
export function profileFor(engine: string | null | undefined): MetricProfile {
  return engine && isProfileName(engine) ? PROFILES[engine] : defaultProfile;
}

/** Which profile a pod is scraped with: static routes use `routes_engine` when one is in force, else their label. */
export function profileForPod(
  pod: { staticRoute: boolean; engine?: string | null },
  routesEngine: string | null | undefined,
): MetricProfile {
  return profileFor(pod.staticRoute && routesEngine ? routesEngine : pod.engine);
}

/** The router metrics a profile reads from one parsed /metrics answer. */
export function applyProfile(profile: MetricProfile, families: readonly PromFamily[]): RouterMetrics {
  return profile.map(indexFamilies(families));
}

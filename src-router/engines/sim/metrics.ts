import type { SimEngineContext } from './context';
import type { Histogram } from './state';

/** The gauge and histogram names of the clutch-layers metrics profile, and the sim's own counters. */
export const SIM_METRIC_NAMES = {
  activeSlots: 'clutch_active_slots',
  queueDepth: 'clutch_queue_depth',
  kvPagesUsed: 'clutch_kv_pages_used',
  kvPagesFree: 'clutch_kv_pages_free',
  queueWait: 'clutch_queue_wait_seconds',
  requests: 'sim_requests_total',
  completed: 'sim_completed_total',
  cancelled: 'sim_cancelled_total',
  failed: 'sim_failed_total',
  slots: 'sim_slots',
  loaded: 'sim_loaded',
} as const;

/**
 * What the real engine of a shape exports besides (`reference/llama-server/metrics.txt`; vLLM V1): the scheduler
 * gauges the `llama.cpp` and `vllm` profiles read. llama-server has no KV-usage gauge; vLLM's is a 0..1 ratio.
 */
export const ENGINE_METRIC_NAMES = {
  llamaProcessing: 'llamacpp:requests_processing',
  llamaDeferred: 'llamacpp:requests_deferred',
  vllmRunning: 'vllm:num_requests_running',
  vllmWaiting: 'vllm:num_requests_waiting',
  vllmKv: 'vllm:kv_cache_usage_perc',
} as const;

/** The rest of what llama-server's /metrics declares, so that a scraper meets every name it would meet in production. */
const LLAMA_OTHER_METRICS: readonly [string, 'gauge' | 'counter', string][] = [
  ['llamacpp:prompt_tokens_total', 'counter', 'Number of prompt tokens processed.'],
  ['llamacpp:prompt_tokens_cached_total', 'counter', 'Number of prompt tokens reused from the cache'],
  ['llamacpp:prompt_seconds_total', 'counter', 'Prompt process time'],
  ['llamacpp:tokens_predicted_total', 'counter', 'Number of generation tokens processed.'],
  ['llamacpp:tokens_predicted_seconds_total', 'counter', 'Predict process time'],
  ['llamacpp:n_decode_total', 'counter', 'Total number of llama_decode() calls'],
  ['llamacpp:n_tokens_max', 'counter', 'Largest observed n_tokens.'],
  ['llamacpp:spec_decode_num_draft_tokens_total', 'counter', 'Total draft tokens generated'],
  ['llamacpp:spec_decode_num_accepted_tokens_total', 'counter', 'Total draft tokens accepted by the target model'],
  ['llamacpp:spec_decode_num_drafts_total', 'counter', 'Total speculative decoding verification steps'],
  ['llamacpp:prompt_tokens_seconds', 'gauge', 'Average prompt throughput in tokens/s.'],
  ['llamacpp:predicted_tokens_seconds', 'gauge', 'Average generation throughput in tokens/s.'],
  ['llamacpp:n_busy_slots_per_decode', 'gauge', 'Average number of busy slots per llama_decode() call'],
];

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function metric(lines: string[], name: string, type: 'gauge' | 'counter', help: string, value: number): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value}`);
}

function histogram(lines: string[], name: string, help: string, h: Histogram): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
  let cumulative = 0;
  h.bounds.forEach((bound, i) => {
    cumulative += h.counts[i];
    lines.push(`${name}_bucket{le="${bound}"} ${cumulative}`);
  });
  lines.push(`${name}_bucket{le="+Inf"} ${h.count}`, `${name}_sum ${h.sum}`, `${name}_count ${h.count}`);
}

/** GET /metrics in Prometheus text format. Times are wall-clock seconds. */
export function renderMetrics(ctx: SimEngineContext): string {
  const { state } = ctx;
  const n = SIM_METRIC_NAMES;
  const lines: string[] = [];
  metric(lines, n.activeSlots, 'gauge', 'Requests holding a slot.', state.activeCount);
  metric(lines, n.queueDepth, 'gauge', 'Requests waiting for a slot.', state.queuedCount);
  metric(lines, n.kvPagesUsed, 'gauge', 'KV cache pages in use by active requests.', state.kvPagesUsed);
  metric(lines, n.kvPagesFree, 'gauge', 'KV cache pages free.', state.kvPagesFree);
  histogram(lines, n.queueWait, 'Seconds a request waited for a slot.', state.queueWait);
  metric(lines, n.requests, 'counter', 'Generation requests received.', state.counters.requests);
  metric(lines, n.completed, 'counter', 'Generation requests answered in full.', state.counters.completed);
  metric(
    lines,
    n.cancelled,
    'counter',
    'Generation requests whose client left before the answer was complete.',
    state.counters.cancelled,
  );
  metric(lines, n.failed, 'counter', 'Generation requests answered with an error (or crashed).', state.counters.failed);
  metric(lines, n.slots, 'gauge', 'Parallel slots.', state.parallel);
  metric(lines, n.loaded, 'gauge', '1 once the model is loaded.', ctx.loaded() ? 1 : 0);
  const e = ENGINE_METRIC_NAMES;
  if (ctx.options.shape === 'llama-server') {
    // llama-server's counters and rates by name and type (the sim keeps no token totals: zeros), then the gauges read.
    for (const [name, type, help] of LLAMA_OTHER_METRICS) metric(lines, name, type, help, 0);
    metric(lines, e.llamaProcessing, 'gauge', 'Number of requests processing.', state.activeCount);
    metric(lines, e.llamaDeferred, 'gauge', 'Number of requests deferred.', state.queuedCount);
  } else if (ctx.options.shape === 'vllm') {
    metric(lines, e.vllmRunning, 'gauge', 'Number of requests in model execution batches.', state.activeCount);
    metric(lines, e.vllmWaiting, 'gauge', 'Number of requests waiting to be processed.', state.queuedCount);
    metric(lines, e.vllmKv, 'gauge', 'KV-cache usage. 1 means 100 percent usage.', state.kvPagesUsed / state.kvPages);
  }
  return `${lines.join('\n')}\n`;
}

export interface SimStats {
  pid: number;
  shape: string;
  alias: string;
  loaded: boolean;
  requests: number;
  completed: number;
  cancelled: number;
  failed: number;
  active: number;
  queued: number;
}

/** GET /sim/stats. */
export function simStats(ctx: SimEngineContext): SimStats {
  const { state, options } = ctx;
  return {
    pid: process.pid,
    shape: options.shape,
    alias: options.alias,
    loaded: ctx.loaded(),
    ...state.counters,
    active: state.activeCount,
    queued: state.queuedCount,
  };
}

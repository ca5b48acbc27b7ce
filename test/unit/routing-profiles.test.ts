import { describe, expect, it } from 'vitest';
import {
  applyProfile,
  clutchLayersProfile,
  defaultProfile,
  histogramQuantile,
  llamaCppProfile,
  PromParseError,
  parsePrometheusText,
  profileFor,
  profileForPod,
  vllmProfile,
} from '../../src-router/routing';

const CLUTCH_TEXT = `# HELP clutch_active_slots Requests holding a slot.
# TYPE clutch_active_slots gauge
clutch_active_slots 2
# TYPE clutch_queue_depth gauge
clutch_queue_depth 5
# TYPE clutch_kv_pages_used gauge
clutch_kv_pages_used 30
# TYPE clutch_kv_pages_free gauge
clutch_kv_pages_free 90
# HELP clutch_queue_wait_seconds Seconds a request waited for a slot.
# TYPE clutch_queue_wait_seconds histogram
clutch_queue_wait_seconds_bucket{le="0.1"} 4
clutch_queue_wait_seconds_bucket{le="1"} 8
clutch_queue_wait_seconds_bucket{le="+Inf"} 10
clutch_queue_wait_seconds_sum 4.5
clutch_queue_wait_seconds_count 10
# TYPE clutch_prefix_cache_hits_total counter
clutch_prefix_cache_hits_total 77
# TYPE clutch_busy_ratio gauge
clutch_busy_ratio 0.5
`;

describe('Prometheus text parsing (library adapter)', () => {
  it('reads gauges, counters, histograms with numbers, labels and Inf', () => {
    const fams = parsePrometheusText(
      `${CLUTCH_TEXT}vllm:num_requests_running{model_name="m",x="a\\"b"} 1.0\n# TYPE lat summary\nlat{quantile="0.5"} 0.2\nlat_sum 3\nlat_count 4\n`,
    );
    const by = new Map(fams.map((f) => [f.name, f]));
    expect(by.get('clutch_active_slots')).toEqual({
      name: 'clutch_active_slots',
      help: 'Requests holding a slot.',
      type: 'gauge',
      samples: [{ labels: {}, value: 2 }],
    });
    expect(by.get('clutch_prefix_cache_hits_total')?.type).toBe('counter');
    expect(by.get('clutch_queue_wait_seconds')).toMatchObject({
      type: 'histogram',
      samples: [
        {
          histogram: {
            buckets: [
              { le: 0.1, count: 4 },
              { le: 1, count: 8 },
              { le: Infinity, count: 10 },
            ],
            sum: 4.5,
            count: 10,
          },
        },
      ],
    });
    expect(by.get('vllm:num_requests_running')).toMatchObject({
      type: 'untyped',
      samples: [{ labels: { model_name: 'm', x: 'a"b' }, value: 1 }],
    });
    expect(by.get('lat')).toMatchObject({
      type: 'summary',
      samples: [{ quantiles: [{ q: 0.5, value: 0.2 }], sum: 3, count: 4 }],
    });
  });

  it('rejects a malformed line with a coded error', () => {
    expect(() => parsePrometheusText('a{b=1} 2\n')).toThrow(PromParseError);
    expect(() => parsePrometheusText('a{b="1" 2\n')).toThrow(expect.objectContaining({ code: 'metrics_parse_error' }));
  });

  it('histogram quantiles interpolate as histogram_quantile does', () => {
    const h = {
      buckets: [
        { le: 0.1, count: 4 },
        { le: 1, count: 8 },
        { le: Infinity, count: 10 },
      ],
      sum: 4.5,
      count: 10,
    };
    expect(histogramQuantile(h, 0.5)).toBeCloseTo(0.325);
    expect(histogramQuantile(h, 0.2)).toBeCloseTo(0.05);
    expect(histogramQuantile(h, 0.95)).toBe(1);
    expect(histogramQuantile({ buckets: [], sum: 0, count: 0 }, 0.5)).toBeUndefined();
  });
});

describe('clutch-layers profile (ROUTE-4)', () => {
  it('maps exactly the five clutch metrics', () => {
    const metrics = applyProfile(clutchLayersProfile, parsePrometheusText(CLUTCH_TEXT));
    expect(metrics).toEqual({
      num_requests_running: 2,
      num_requests_waiting: 5,
      kv_cache_usage: 0.25,
      kv_cache_usage_cpu: 0,
      queue_wait_seconds: {
        buckets: [
          { le: 0.1, count: 4 },
          { le: 1, count: 8 },
          { le: Infinity, count: 10 },
        ],
        sum: 4.5,
        count: 10,
      },
    });
    expect(clutchLayersProfile.reads).toEqual([
      'clutch_active_slots',
      'clutch_queue_depth',
      'clutch_kv_pages_used',
      'clutch_kv_pages_free',
      'clutch_queue_wait_seconds',
    ]);
  });

  it('zero KV total → KV usage absent, CPU KV still the constant 0', () => {
    const m = applyProfile(
      clutchLayersProfile,
      parsePrometheusText('clutch_kv_pages_used 0\nclutch_kv_pages_free 0\nclutch_active_slots 0\n'),
    );
    expect(m).toEqual({ num_requests_running: 0, kv_cache_usage_cpu: 0 });
    expect('kv_cache_usage' in m).toBe(false);
  });

  it('absent stays absent (no histogram in this build, one KV gauge missing)', () => {
    const m = applyProfile(clutchLayersProfile, parsePrometheusText('clutch_queue_depth 1\nclutch_kv_pages_used 3\n'));
    expect(m).toEqual({ num_requests_waiting: 1, kv_cache_usage_cpu: 0 });
  });
});

describe('other profiles', () => {
  it('the default profile ignores clutch names (so metric strategies fall back for such a model)', () => {
    const m = applyProfile(defaultProfile, parsePrometheusText(CLUTCH_TEXT));
    expect(m).toEqual({});
    expect(defaultProfile.reads.some((n) => n.startsWith('clutch_'))).toBe(false);
  });

  it('vllm: the current (V1) names — running, waiting, kv_cache_usage_perc with CPU 0, queue-time histogram; V0 names are not read', () => {
    const v1 = applyProfile(
      vllmProfile,
      parsePrometheusText(
        '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="m",engine="0"} 3\nvllm:num_requests_waiting{model_name="m",engine="0"} 1\n# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{model_name="m",engine="0"} 0.7\n# TYPE vllm:request_queue_time_seconds histogram\nvllm:request_queue_time_seconds_bucket{le="+Inf"} 2\nvllm:request_queue_time_seconds_sum 1\nvllm:request_queue_time_seconds_count 2\n',
      ),
    );
    expect(v1).toEqual({
      num_requests_running: 3,
      num_requests_waiting: 1,
      kv_cache_usage: 0.7,
      kv_cache_usage_cpu: 0,
      queue_wait_seconds: { buckets: [{ le: Infinity, count: 2 }], sum: 1, count: 2 },
    });
    // An old V0 build's KV gauges are names current vLLM no longer exports: the profile does not read them.
    const v0 = applyProfile(
      vllmProfile,
      parsePrometheusText(
        'vllm:num_requests_running 3\nvllm:gpu_cache_usage_perc 0.4\nvllm:cpu_cache_usage_perc 0.1\n',
      ),
    );
    expect(v0).toEqual({ num_requests_running: 3 });
    expect(vllmProfile.reads).toEqual([
      'vllm:num_requests_running',
      'vllm:num_requests_waiting',
      'vllm:kv_cache_usage_perc',
      'vllm:request_queue_time_seconds',
    ]);
  });

  it('llama.cpp: requests_processing and requests_deferred only — current builds have no KV gauge, so KV stays absent', () => {
    const m = applyProfile(
      llamaCppProfile,
      parsePrometheusText(
        'llamacpp:requests_processing 1\nllamacpp:requests_deferred 4\nllamacpp:kv_cache_usage_ratio 0.5\n',
      ),
    );
    expect(m).toEqual({ num_requests_running: 1, num_requests_waiting: 4 });
    expect(llamaCppProfile.reads).toEqual(['llamacpp:requests_processing', 'llamacpp:requests_deferred']);
    expect(llamaCppProfile.provides).toEqual(['num_requests_running', 'num_requests_waiting']);
  });

  it('each profile provides exactly what it maps from a page publishing every name it reads', () => {
    const full = (name: string) =>
      `# TYPE ${name} ${name.endsWith('_seconds') ? 'histogram' : 'gauge'}\n${name.endsWith('_seconds') ? `${name}_bucket{le="+Inf"} 1\n${name}_sum 1\n${name}_count 1` : `${name} 0.5`}\n`;
    for (const profile of [clutchLayersProfile, vllmProfile, llamaCppProfile, defaultProfile]) {
      const m = applyProfile(profile, parsePrometheusText(profile.reads.map(full).join('')));
      expect(Object.keys(m).sort(), profile.name).toEqual([...profile.provides].sort());
    }
  });

  it('profile choice: label, unknown → default, static routes use routes_engine first', () => {
    expect(profileFor('clutch-layers').name).toBe('clutch-layers');
    expect(profileFor(undefined).name).toBe('default');
    expect(profileFor('sglang').name).toBe('default');
    expect(profileForPod({ staticRoute: true, engine: 'vllm' }, 'clutch-layers').name).toBe('clutch-layers');
    expect(profileForPod({ staticRoute: true, engine: 'vllm' }, null).name).toBe('vllm');
    expect(profileForPod({ staticRoute: false, engine: 'llama.cpp' }, 'clutch-layers').name).toBe('llama.cpp');
  });
});

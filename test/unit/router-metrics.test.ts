import { describe, expect, it } from 'vitest';
import { MODEL_CAP } from '../../src-router/serve/decision-metrics';
import { MAX_LABEL_LENGTH } from '../../src-router/serve/metric-labels';
import { RouterMetrics } from '../../src-router/serve/router-metrics';
import type { RequestRow } from '../../src-router/store';

// The router's own metrics: each finished request counts once under its label set, and its duration and queue wait
// are observed (the label children are bound once per set, issue #14 — counts must stay exact per set).
const row = (o: Partial<RequestRow> = {}): RequestRow => ({
  finishedAt: 0,
  nodeId: 'n',
  model: 'm',
  localId: 'm',
  backend: 'sim',
  endpoint: 'chat',
  streamed: false,
  queueWaitMs: 20,
  durationMs: 300,
  outcome: 'ok',
  ...o,
});

describe('router metrics', () => {
  it('counts requests per model, endpoint and outcome, and observes duration and queue wait per set', async () => {
    const m = new RouterMetrics(
      () => undefined,
      () => undefined,
    );
    m.request(row());
    m.request(row({ durationMs: 3_000 }));
    m.request(row({ outcome: 'error' }));
    m.request(row({ model: 'other', endpoint: 'embedding' }));
    const text = await m.registry.metrics();
    expect(text).toContain('routerdesk_requests_total{model="m",endpoint="chat",outcome="ok"} 2');
    expect(text).toContain('routerdesk_requests_total{model="m",endpoint="chat",outcome="error"} 1');
    expect(text).toContain('routerdesk_requests_total{model="other",endpoint="embedding",outcome="ok"} 1');
    expect(text).toContain('routerdesk_request_duration_seconds_count{model="m",endpoint="chat"} 3');
    expect(text).toContain('routerdesk_request_duration_seconds_bucket{le="0.5",model="m",endpoint="chat"} 2');
    expect(text).toContain('routerdesk_queue_wait_seconds_count{model="m"} 3');
    // The whole histogram, in Prometheus's text format: cumulative buckets, +Inf, sum, count, HELP and TYPE.
    expect(text).toContain('# TYPE routerdesk_request_duration_seconds histogram');
    expect(text).toContain('# TYPE routerdesk_requests_total counter');
    expect(text).toContain('routerdesk_request_duration_seconds_bucket{le="0.05",model="m",endpoint="chat"} 0');
    expect(text).toContain('routerdesk_request_duration_seconds_bucket{le="5",model="m",endpoint="chat"} 3');
    expect(text).toContain('routerdesk_request_duration_seconds_bucket{le="+Inf",model="m",endpoint="chat"} 3');
    const sum = /routerdesk_request_duration_seconds_sum\{model="m",endpoint="chat"\} (\S+)\n/.exec(text)?.[1];
    expect(Number(sum)).toBeCloseTo(3.6, 9);
  });

  it('escapes label values, and counts again from zero after a reset', async () => {
    const m = new RouterMetrics(
      () => undefined,
      () => undefined,
    );
    m.request(row({ model: 'a "quoted" \\ name' }));
    expect(await m.registry.metrics()).toContain(
      'routerdesk_requests_total{model="a \\"quoted\\" \\\\ name",endpoint="chat",outcome="ok"} 1',
    );
    m.registry.resetMetrics();
    expect(await m.registry.metrics()).toContain(
      'routerdesk_requests_total{model="a \\"quoted\\" \\\\ name",endpoint="chat",outcome="ok"} 0',
    );
    // Counting goes on after a reset (the label set's handle is bound once).
    m.request(row({ model: 'a "quoted" \\ name' }));
    const text = await m.registry.metrics();
    expect(text).toContain(
      'routerdesk_requests_total{model="a \\"quoted\\" \\\\ name",endpoint="chat",outcome="ok"} 1',
    );
    expect(text).toContain('routerdesk_queue_wait_seconds_count{model="a \\"quoted\\" \\\\ name"} 1');
  });

  it('keeps the model label bounded: a name a peer made too long, or one past the cap of names, counts as other', async () => {
    const m = new RouterMetrics(
      () => undefined,
      () => undefined,
    );
    const huge = 'x'.repeat(MAX_LABEL_LENGTH + 1);
    m.request(row({ model: huge }));
    m.routingFallback(huge, ['kv_cache']);
    for (let i = 0; i < MODEL_CAP + 50; i++) m.request(row({ model: `peer-model-${i}` }));
    const text = await m.registry.metrics();
    expect(text).not.toContain(huge);
    const series = text.split('\n').filter((l) => l.startsWith('routerdesk_requests_total{'));
    expect(series.length).toBeLessThanOrEqual(MODEL_CAP + 1);
    expect(series.reduce((n, l) => n + Number(l.split(' ').pop()), 0)).toBe(MODEL_CAP + 51);
    expect(text).toContain('routerdesk_requests_total{model="other",endpoint="chat",outcome="ok"} 51');
    expect(text).toContain('routerdesk_routing_fallbacks_total{model="other",missing="kv_cache"} 1');
  });
});

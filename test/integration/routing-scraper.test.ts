import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricScraper } from '../../src-router/routing';

/** A real local /metrics server speaking clutch-layers text; its answers are set per test. */
let server: Server;
let base = '';
const pages: Record<string, { status: number; body: string; delayMs?: number }> = {};

function clutch(active: number, queued: number, used: number, free: number): string {
  return [
    '# TYPE clutch_active_slots gauge',
    `clutch_active_slots ${active}`,
    '# TYPE clutch_queue_depth gauge',
    `clutch_queue_depth ${queued}`,
    '# TYPE clutch_kv_pages_used gauge',
    `clutch_kv_pages_used ${used}`,
    '# TYPE clutch_kv_pages_free gauge',
    `clutch_kv_pages_free ${free}`,
    '# TYPE clutch_queue_wait_seconds histogram',
    'clutch_queue_wait_seconds_bucket{le="0.5"} 1',
    'clutch_queue_wait_seconds_bucket{le="+Inf"} 2',
    'clutch_queue_wait_seconds_sum 1.5',
    'clutch_queue_wait_seconds_count 2',
    '',
  ].join('\n');
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const page = pages[req.url ?? ''] ?? { status: 404, body: 'not found' };
    const send = () => res.writeHead(page.status, { 'content-type': 'text/plain; version=0.0.4' }).end(page.body);
    if (page.delayMs) setTimeout(send, page.delayMs).unref();
    else send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('metric scraper against a real HTTP /metrics', () => {
  it('scrapes each pod through its profile and keeps the latest metrics with their time', async () => {
    pages['/a/metrics'] = { status: 200, body: clutch(2, 3, 25, 75) };
    pages['/b/metrics'] = { status: 200, body: clutch(0, 0, 0, 0) };
    let now = 1_000;
    const s = new MetricScraper({ intervalMs: 1_000, timeoutMs: 1_000, now: () => now });
    s.setTargets([
      { podId: 'a', url: `${base}/a/metrics`, profile: 'clutch-layers' },
      { podId: 'b', url: `${base}/b/metrics`, profile: 'clutch-layers' },
      { podId: 'c', url: `${base}/a/metrics` }, // no engine set → default profile: clutch names not read
    ]);
    await s.scrapeNow();
    expect(s.metricsFor('a')).toMatchObject({
      num_requests_running: 2,
      num_requests_waiting: 3,
      kv_cache_usage: 0.25,
      kv_cache_usage_cpu: 0,
      queue_wait_seconds: { count: 2, sum: 1.5 },
    });
    expect(s.metricsFor('b')).toEqual({
      num_requests_running: 0,
      num_requests_waiting: 0,
      kv_cache_usage_cpu: 0,
      queue_wait_seconds: expect.anything(),
    });
    expect(s.metricsFor('c')).toEqual({});
    expect(s.records().find((r) => r.podId === 'a')).toMatchObject({
      profile: 'clutch-layers',
      scrapedAt: 1_000,
      misses: 0,
      stale: false,
    });
    pages['/a/metrics'] = { status: 200, body: clutch(5, 0, 50, 50) };
    now = 2_000;
    await s.scrapeNow();
    expect(s.metricsFor('a')).toMatchObject({ num_requests_running: 5, kv_cache_usage: 0.5 });
  });

  it('marks a pod stale after missed intervals (errors, timeouts, bad text) and recovers', async () => {
    pages['/d/metrics'] = { status: 200, body: clutch(1, 1, 1, 1) };
    const errors: string[] = [];
    const now = 10_000;
    const s = new MetricScraper({
      intervalMs: 1_000,
      timeoutMs: 150,
      staleAfter: 2,
      now: () => now,
      onError: (_, m) => errors.push(m),
    });
    s.setTargets([{ podId: 'd', url: `${base}/d/metrics`, profile: 'clutch-layers' }]);
    await s.scrapeNow();
    expect(s.metricsFor('d')).toBeDefined();
    pages['/d/metrics'] = { status: 500, body: 'boom' };
    await s.scrapeNow();
    expect(s.metricsFor('d')).toBeDefined(); // one miss: still fresh
    pages['/d/metrics'] = { status: 200, body: clutch(1, 1, 1, 1), delayMs: 2_000 };
    await s.scrapeNow();
    expect(s.metricsFor('d')).toBeUndefined();
    expect(s.records()[0]).toMatchObject({ misses: 2, stale: true, lastError: 'no answer within 150 ms' });
    pages['/d/metrics'] = { status: 200, body: 'clutch_active_slots{x=1} 2\n' };
    await s.scrapeNow();
    expect(errors).toEqual(['HTTP 500', 'no answer within 150 ms', expect.stringContaining('invalid line')]);
    pages['/d/metrics'] = { status: 200, body: clutch(4, 0, 1, 3) };
    await s.scrapeNow();
    expect(s.metricsFor('d')).toMatchObject({ num_requests_running: 4, kv_cache_usage: 0.25 });
  });

  it('goes stale by age when scrapes stop; unreachable pods and stop()', async () => {
    pages['/e/metrics'] = { status: 200, body: clutch(1, 0, 0, 1) };
    let now = 0;
    const s = new MetricScraper({ intervalMs: 1_000, staleAfter: 3, now: () => now });
    s.setTargets([
      { podId: 'e', url: `${base}/e/metrics`, profile: 'clutch-layers' },
      { podId: 'dead', url: 'http://127.0.0.1:1/metrics', profile: 'clutch-layers' },
    ]);
    s.start();
    s.stop();
    await s.scrapeNow();
    expect(s.metricsFor('e')).toBeDefined();
    expect(s.records().find((r) => r.podId === 'dead')).toMatchObject({ stale: true, metrics: undefined });
    now = 3_001;
    expect(s.metricsFor('e')).toBeUndefined();
  });
});

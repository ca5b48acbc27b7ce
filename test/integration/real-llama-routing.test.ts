import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyProfile, llamaCppProfile, parsePrometheusText } from '../../src-router/routing';
import { eventually, startNode, type TestNode, tempDir } from '../support/node-harness';
import { REAL_ENGINES_TIMEOUT_MS } from '../support/real-engines';
import { type LlamaServerProcess, startLlamaServer, tinyGguf, WELL_FORMED_FLAGS } from '../support/real-llama';

// The llama.cpp metric profile and the metric strategies on the real llama-server's /metrics (ROUTE-2..4): two
// replicas of one static-route model, one of them kept busy by a long request; least-request sends every request to
// the other, least-kv-cache finds no KV gauge in llama-server's metrics and falls back to random, counted.
const OPERATOR = 'operator-token-real-routing-0123456789';

interface ScrapedPod {
  podId: string;
  url: string;
  profile: string;
  stale: boolean;
  metrics?: { num_requests_running?: number; num_requests_waiting?: number };
}

describe('metric routing over two real llama-server replicas', () => {
  const dir = tempDir('routerdesk-real-routing-');
  let busy: LlamaServerProcess;
  let idle: LlamaServerProcess;
  let node: TestNode;
  const hold = new AbortController();

  const call = async <T>(path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${node.url}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { authorization: `Bearer ${OPERATOR}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const useStrategy = async (strategy: string) => {
    await call('/router/v1/console/runtime.setRouting', { strategy });
    await eventually(
      async () =>
        (await call<{ effective: { strategy: string } | null }>('/router/v1/console/runtime.routing')).effective
          ?.strategy === strategy,
      { what: `${strategy} in force` },
    );
  };
  const metricsOf = async (engine: LlamaServerProcess) =>
    applyProfile(llamaCppProfile, parsePrometheusText(await (await fetch(`${engine.url}/metrics`)).text()));
  /** Requests the router had answered by each replica (the long request goes to the engine directly: not counted). */
  const answered = async () => {
    const { upstreams } = await call<{ upstreams: { model: string; endpoint: string; answered: number }[] }>(
      '/router/v1/console/runtime.upstreams',
    );
    const of = (e: LlamaServerProcess) =>
      upstreams.find((u) => u.model === 'llamas' && u.endpoint.startsWith(e.url))?.answered ?? 0;
    return { busy: of(busy), idle: of(idle) };
  };
  const fallbacks = async () => {
    const text = await (await fetch(`${node.url}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('routerdesk_routing_fallbacks_total{') && l.includes('model="llamas"'))
      .reduce((s, l) => s + Number(l.split(' ').pop()), 0);
  };
  const completion = () =>
    fetch(`${node.url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'llamas', prompt: 'hi', max_tokens: 1 }),
    });
  /** The router's fresh llama.cpp scrapes of both replicas: the busy one running its request, the idle one nothing. */
  const scrapedBusyAndIdle = () =>
    eventually(
      async () => {
        const pods = (await call<{ pods: ScrapedPod[] }>('/router/v1/console/runtime.scrape')).pods.filter((p) =>
          p.podId.startsWith('llamas'),
        );
        const of = (e: LlamaServerProcess) => pods.find((p) => p.url.startsWith(e.url));
        const [b, i] = [of(busy), of(idle)];
        const fresh = (p?: ScrapedPod) => p && !p.stale && p.profile === 'llama.cpp';
        return fresh(b) && fresh(i) && b!.metrics?.num_requests_running === 1 && i!.metrics?.num_requests_running === 0
          ? pods
          : undefined;
      },
      { what: 'fresh scrapes: one replica busy, one idle' },
    );

  beforeAll(async () => {
    // A bigger model and a long context, so that a long request lasts; the busy replica has a second slot, so that a
    // request routed to it is not kept waiting behind its long one.
    const weights = await tinyGguf(dir, 'replica', { embd: 256, layers: 4, seed: 41, ctx: 8192 });
    [busy, idle] = await Promise.all([
      startLlamaServer(weights, ['-c', '8192', '-np', '2', '--metrics', ...WELL_FORMED_FLAGS]),
      startLlamaServer(weights, ['-c', '1024', '-np', '1', '--metrics', ...WELL_FORMED_FLAGS]),
    ]);
    node = await startNode({
      dir,
      models: {},
      config: {
        console: { operators: [OPERATOR] },
        routing: {
          strategy: 'random',
          poll_interval: '300ms',
          scrape_interval: '200ms',
          static_routes: { llamas: { engine: 'llama.cpp', endpoints: [busy.url, idle.url] } },
        },
      },
    });
    // The busy replica's load: one long generation after another, straight to the engine, until the file ends.
    void (async () => {
      while (!hold.signal.aborted) {
        await fetch(`${busy.url}/completion`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          signal: hold.signal,
          body: JSON.stringify({ prompt: 'a long story', n_predict: 4000, ignore_eos: true }),
        })
          .then((r) => r.text())
          .catch(() => {});
      }
    })();
    await eventually(async () => (await metricsOf(busy)).num_requests_running === 1, {
      what: 'the busy replica running its request',
    });
  }, REAL_ENGINES_TIMEOUT_MS);
  afterAll(async () => {
    hold.abort();
    await node?.stop();
    await Promise.all([busy?.stop(), idle?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('the llama.cpp profile reads running and waiting from the real /metrics, and nothing else', async () => {
    const pods = await scrapedBusyAndIdle();
    expect(await metricsOf(idle)).toEqual({ num_requests_running: 0, num_requests_waiting: 0 });
    expect(Object.keys(await metricsOf(busy)).sort()).toEqual(['num_requests_running', 'num_requests_waiting']);
    for (const p of pods)
      expect(Object.keys(p.metrics!).sort()).toEqual(['num_requests_running', 'num_requests_waiting']);
  });

  it('least-request sends every request to the idle replica (ROUTE-2/3)', async () => {
    await useStrategy('least-request');
    const before = await answered();
    for (let i = 0; i < 4; i++) {
      await scrapedBusyAndIdle();
      expect((await completion()).status).toBe(200);
    }
    expect(await answered()).toEqual({ busy: before.busy, idle: before.idle + 4 });
    expect(await fallbacks()).toBe(0);
  });

  it('least-kv-cache finds no KV gauge in llama-server’s metrics: random, each request a counted fallback (ROUTE-4)', async () => {
    await useStrategy('least-kv-cache');
    const before = await fallbacks();
    for (let i = 0; i < 3; i++) expect((await completion()).status).toBe(200);
    expect(await fallbacks()).toBe(before + 3);
    const metrics = await (await fetch(`${node.url}/metrics`)).text();
    expect(metrics).toMatch(
      /routerdesk_routing_fallbacks_total\{(?=[^}]*model="llamas")(?=[^}]*missing="kv_cache_usage,kv_cache_usage_cpu")[^}]*\}/,
    );
  });
});

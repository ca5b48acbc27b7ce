import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import { eventually, startNode, type TestNode } from '../support/node-harness';
import { type SimProcess, startSimProcess } from '../support/sim-process';

// Three real sim-engine processes as static-route endpoints of one clutch-layers model, loaded directly with
// hanging requests so their queues and KV use differ; the strategy in force must send traffic where the scores say
// (ROUTE-2..4, ROUTE-9; issue #5 "Done when").
const OPERATOR = 'operator-token-strategies-0123456789';
const PAGES = 64;

interface ScrapedPod {
  podId: string;
  url: string;
  profile: string;
  stale: boolean;
  metrics?: {
    num_requests_running?: number;
    num_requests_waiting?: number;
    kv_cache_usage?: number;
    kv_cache_usage_cpu?: number;
  };
}
interface Upstream {
  model: string;
  endpoint: string;
  engine: string | null;
  status: string;
  answered: number;
  notAnswered: number;
  lastAnswer: string;
}

/**
 * The expected pick, straight from the seed: each scorer min-max normalised to [0,1] with lower raw values better
 * (least-request: running + waiting; least-kv-cache: GPU + CPU KV use), combined by weight; the best pod wins.
 */
function expectedPick(spec: string, pods: Record<string, { queue: number; kv: number }>): string {
  const weights: Record<string, number> = spec.startsWith('multi:')
    ? Object.fromEntries(
        spec
          .slice(6)
          .split(',')
          .map((pair) => [pair.slice(0, pair.lastIndexOf(':')), Number(pair.slice(pair.lastIndexOf(':') + 1))]),
      )
    : { [spec]: 1 };
  const names = Object.keys(pods);
  const norm = (raw: number[]) =>
    raw.map((x) =>
      Math.max(...raw) === Math.min(...raw) ? 1 : (Math.max(...raw) - x) / (Math.max(...raw) - Math.min(...raw)),
    );
  const lr = norm(names.map((n) => pods[n].queue));
  const kv = norm(names.map((n) => pods[n].kv));
  const total = names.map((_, i) => (weights['least-request'] ?? 0) * lr[i] + (weights['least-kv-cache'] ?? 0) * kv[i]);
  const best = Math.max(...total);
  const winners = names.filter((_, i) => total[i] === best);
  expect(winners, `${spec}: a single best pod`).toHaveLength(1);
  return winners[0];
}

describe('routing strategies across three sim pods of one model', () => {
  const sims: Record<'A' | 'B' | 'C', SimProcess> = {} as never;
  let node: TestNode;
  let dead = '';
  const hangs: AbortController[] = [];
  // Base load per pod: A most requests and little KV, B one request with a huge prompt, C in between on requests
  // and the least KV. Prompt tokens = ceil(chars / 4) of "user: …"; one KV page holds 16 tokens.
  const load = { A: { hangs: 3, chars: 100 }, B: { hangs: 1, chars: 3000 }, C: { hangs: 2, chars: 40 } };
  const pagesOf = (chars: number) => Math.ceil(Math.ceil((chars + 6) / 4) / 16);
  const base = Object.fromEntries(
    Object.entries(load).map(([k, l]) => [k, { queue: l.hangs, kv: (l.hangs * pagesOf(l.chars)) / PAGES }]),
  ) as Record<'A' | 'B' | 'C', { queue: number; kv: number }>;

  const call = async <T>(path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${node.url}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { authorization: `Bearer ${OPERATOR}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const chat = (model: string) =>
    fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(10_000),
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }),
    });
  const counts = async () =>
    Object.fromEntries(
      await Promise.all(Object.entries(sims).map(async ([k, s]) => [k, (await s.stats()).requests] as const)),
    ) as Record<string, number>;
  const delta = (after: Record<string, number>, before: Record<string, number>) =>
    Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
  const podOf = (url: string) => (Object.entries(sims).find(([, s]) => s.url === url) ?? ['?'])[0];
  /** The router's scrape of the clutchy pods, once every one is fresh and shows exactly the base load. */
  const atBase = () =>
    eventually(
      async () => {
        const pods = (await call<{ pods: ScrapedPod[] }>('/router/v1/console/runtime.scrape')).pods.filter((p) =>
          p.podId.startsWith('clutchy'),
        );
        const ok =
          pods.length === 3 &&
          pods.every((p) => {
            const b = base[podOf(p.url.replace(/\/metrics$/, '')) as 'A'];
            const m = p.metrics;
            return (
              !p.stale &&
              p.profile === 'clutch-layers' &&
              m?.num_requests_running === b.queue &&
              m.num_requests_waiting === 0 &&
              Math.abs(m.kv_cache_usage! - b.kv) < 1e-9 &&
              m.kv_cache_usage_cpu === 0
            );
          });
        return ok ? pods : undefined;
      },
      { timeoutMs: 5_000, what: 'fresh scrapes showing the base load' },
    );
  const fallbacks = async (model: string) => {
    const text = await (await fetch(`${node.url}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('routerdesk_routing_fallbacks_total{') && l.includes(`model="${model}"`))
      .reduce((s, l) => s + Number(l.split(' ').pop()), 0);
  };
  const useStrategy = async (strategy: string) => {
    await call('/router/v1/console/runtime.setRouting', { strategy });
    await eventually(
      async () =>
        (await call<{ effective: { strategy: string } | null }>('/router/v1/console/runtime.routing')).effective
          ?.strategy === strategy,
      { timeoutMs: 3_000, what: `${strategy} in force` },
    );
  };

  beforeAll(async () => {
    const [a, b, c] = await Promise.all(
      ['A', 'B', 'C'].map((alias) =>
        startSimProcess([
          '--shape',
          'llama-server',
          '--alias',
          alias,
          '--parallel',
          '4',
          '--kv-pages',
          String(PAGES),
          '--token-time',
          '1ms',
          '--load-time',
          '50ms',
        ]),
      ),
    );
    Object.assign(sims, { A: a, B: b, C: c });
    await eventually(
      async () => (await Promise.all(Object.values(sims).map((s) => s.stats()))).every((s) => s.loaded),
      { what: 'sims loaded' },
    );
    dead = `http://127.0.0.1:${await freePort()}`;
    const endpoints = [a.url, b.url, c.url];
    node = await startNode({
      models: {},
      config: {
        console: { operators: [OPERATOR] },
        routing: {
          strategy: 'random',
          poll_interval: '300ms',
          scrape_interval: '200ms',
          static_routes: {
            clutchy: { engine: 'clutch-layers', endpoints },
            plain: { endpoints },
            gone: { engine: 'clutch-layers', endpoints: [dead] },
            llamas: { engine: 'llama.cpp', endpoints },
          },
        },
      },
    });
    for (const [k, l] of Object.entries(load)) {
      for (let i = 0; i < l.hangs; i++) {
        const ac = new AbortController();
        hangs.push(ac);
        fetch(`${sims[k as 'A'].url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          signal: ac.signal,
          body: JSON.stringify({
            model: k,
            messages: [{ role: 'user', content: 'x'.repeat(l.chars) }],
            max_tokens: 1,
            sim_fail: 'hang',
          }),
        }).catch(() => {});
      }
    }
    await eventually(
      async () => {
        const s = await Promise.all(
          Object.entries(sims).map(async ([k, x]) => (await x.stats()).active === load[k as 'A'].hangs),
        );
        return s.every(Boolean);
      },
      { what: 'hanging requests hold their slots' },
    );
  });
  afterAll(async () => {
    for (const ac of hangs) ac.abort();
    await Promise.all([node?.stop(), ...Object.values(sims).map((s) => s.stop())]);
  });

  it("scrapes fresh clutch-layers metrics reflecting each pod's load", async () => {
    const pods = await atBase();
    expect(pods.map((p) => p.podId).sort()).toEqual(['A', 'B', 'C'].map((k) => `clutchy ${sims[k as 'A'].url}`).sort());
    expect(base.B.kv).toBeGreaterThan(base.A.kv);
    expect(base.A.kv).toBeGreaterThan(base.C.kv);
  });

  const cases: [string, 'A' | 'B' | 'C'][] = [
    ['least-request', 'B'],
    ['least-kv-cache', 'C'],
    ['multi:least-request:3,least-kv-cache:1', 'B'],
    ['multi:least-request:1,least-kv-cache:3', 'C'],
  ];
  it.each(cases)('%s sends every request to the pod the scores pick (%s)', async (strategy, designed) => {
    await useStrategy(strategy);
    const want = expectedPick(strategy, base);
    expect(want).toBe(designed);
    const before = await counts();
    for (let i = 0; i < 5; i++) {
      await atBase();
      const res = await chat('clutchy');
      expect(res.status).toBe(200);
      expect(((await res.json()) as { model: string }).model).toBe('clutchy');
    }
    expect(delta(await counts(), before)).toEqual({ A: 0, B: 0, C: 0, [want]: 5 });
    expect(await fallbacks('clutchy')).toBe(0);
  });

  it('a model with no engine set falls back to random under least-request, and the fallback counter moves (ROUTE-2/4)', async () => {
    await useStrategy('least-request');
    const before = await counts();
    const fallbacksBefore = await fallbacks('plain');
    const n = 30;
    for (let i = 0; i < n; i++) expect((await chat('plain')).status).toBe(200);
    const spread = delta(await counts(), before);
    expect(Object.values(spread).reduce((a, b) => a + b, 0)).toBe(n);
    for (const k of ['A', 'B', 'C']) expect(spread[k], `requests at ${k}`).toBeGreaterThan(0);
    expect((await fallbacks('plain')) - fallbacksBefore).toBe(n);
    const metrics = await (await fetch(`${node.url}/metrics`)).text();
    expect(metrics).toMatch(
      /routerdesk_routing_fallbacks_total\{[^}]*missing="num_requests_running,num_requests_waiting"[^}]*\}/,
    );
    const scraped = (await call<{ pods: ScrapedPod[] }>('/router/v1/console/runtime.scrape')).pods.filter((p) =>
      p.podId.startsWith('plain'),
    );
    expect(scraped.map((p) => [p.profile, p.metrics])).toEqual([
      ['default', {}],
      ['default', {}],
      ['default', {}],
    ]);
  });

  it('routed upstreams: answered counts from real turns, untried for a pod never called, never for a dead endpoint (ROUTE-9)', async () => {
    const res = await chat('gone');
    expect(res.status).toBe(502);
    const { upstreams } = await call<{ upstreams: Upstream[] }>('/router/v1/console/runtime.upstreams');
    const row = (model: string, endpoint: string) =>
      upstreams.find((u) => u.model === model && u.endpoint === endpoint)!;
    expect(upstreams).toHaveLength(10); // clutchy, plain and llamas × 3, gone × 1
    expect(row('clutchy', sims.A.url)).toMatchObject({
      engine: 'clutch-layers',
      status: 'untried',
      answered: 0,
      notAnswered: 0,
      lastAnswer: 'never',
    });
    expect(row('clutchy', sims.B.url)).toMatchObject({ status: 'answering', answered: 10, notAnswered: 0 });
    expect(row('clutchy', sims.C.url)).toMatchObject({ status: 'answering', answered: 10, notAnswered: 0 });
    expect(Date.parse(row('clutchy', sims.B.url).lastAnswer)).toBeGreaterThan(Date.now() - 120_000);
    const plain = ['A', 'B', 'C'].map((k) => row('plain', sims[k as 'A'].url));
    expect(plain.every((u) => u.engine === null && u.status === 'answering')).toBe(true);
    expect(plain.reduce((s, u) => s + u.answered, 0)).toBe(30);
    expect(row('gone', dead)).toMatchObject({
      status: 'not_answering',
      answered: 0,
      notAnswered: 1,
      lastAnswer: 'never',
    });
  });

  it('llama.cpp pods (the sims speak llama-server’s /metrics): least-request scores them, least-kv-cache stays cold for want of a KV gauge (ROUTE-4)', async () => {
    // Fresh llama.cpp scrapes of every pod showing its base load: running and waiting only, no KV metric at all.
    const llamasAtBase = () =>
      eventually(
        async () => {
          const pods = (await call<{ pods: ScrapedPod[] }>('/router/v1/console/runtime.scrape')).pods.filter((p) =>
            p.podId.startsWith('llamas'),
          );
          const ok =
            pods.length === 3 &&
            pods.every(
              (p) =>
                !p.stale &&
                p.profile === 'llama.cpp' &&
                p.metrics?.num_requests_running === base[podOf(p.url.replace(/\/metrics$/, '')) as 'A'].queue &&
                p.metrics.num_requests_waiting === 0,
            );
          return ok ? pods : undefined;
        },
        { timeoutMs: 5_000, what: 'fresh llama.cpp scrapes showing the base load' },
      );
    const pods = await llamasAtBase();
    for (const p of pods)
      expect(Object.keys(p.metrics!).sort()).toEqual(['num_requests_running', 'num_requests_waiting']);

    await useStrategy('least-request');
    const before = await counts();
    for (let i = 0; i < 3; i++) {
      await llamasAtBase();
      expect((await chat('llamas')).status).toBe(200);
    }
    expect(delta(await counts(), before)).toEqual({ A: 0, B: 3, C: 0 });
    expect(await fallbacks('llamas')).toBe(0);

    await useStrategy('least-kv-cache');
    const n = 4;
    for (let i = 0; i < n; i++) expect((await chat('llamas')).status).toBe(200);
    expect(await fallbacks('llamas')).toBe(n);
    const metrics = await (await fetch(`${node.url}/metrics`)).text();
    expect(metrics).toMatch(
      /routerdesk_routing_fallbacks_total\{(?=[^}]*model="llamas")(?=[^}]*missing="kv_cache_usage,kv_cache_usage_cpu")[^}]*\}/,
    );
  });
});

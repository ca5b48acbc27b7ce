import { describe, expect, it } from 'vitest';
import {
  combineScores,
  createPickState,
  normalizeLowerBetter,
  type ParsedStrategy,
  type PodSnapshot,
  PrefixTable,
  pick,
  promptPrefixHash,
  type RouterMetrics,
  requiresOf,
  STRATEGIES,
  validateStrategy,
} from '../../src-router/routing';

function strategy(spec: string): ParsedStrategy {
  const v = validateStrategy(spec, STRATEGIES);
  if (!v.ok) throw new Error(v.message);
  return v.strategy;
}

/** A deterministic RNG that answers the given values in turn. */
function seq(...values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length];
}

const m = (running: number, waiting: number, kv: number, cpu = 0): RouterMetrics => ({
  num_requests_running: running,
  num_requests_waiting: waiting,
  kv_cache_usage: kv,
  kv_cache_usage_cpu: cpu,
});
const pod = (id: string, metrics?: RouterMetrics, extra: Partial<PodSnapshot> = {}): PodSnapshot => ({
  id,
  ready: true,
  inflight: 0,
  metrics,
  ...extra,
});

describe('strategy registry (ROUTE-1)', () => {
  it('declares requires and weightability per strategy', () => {
    const by = Object.fromEntries(STRATEGIES.map((s) => [s.name, s]));
    expect(by['least-request'].requires).toEqual(['num_requests_running', 'num_requests_waiting']);
    expect(by['least-kv-cache'].requires).toEqual(['kv_cache_usage', 'kv_cache_usage_cpu']);
    for (const n of ['random', 'round-robin', 'prefix-affinity']) expect(by[n].requires).toEqual([]);
    expect(STRATEGIES.filter((s) => s.weightable).map((s) => s.name)).toEqual([
      'least-request',
      'least-kv-cache',
      'prefix-affinity',
    ]);
    expect(by.multi.label).toBe('multi (weighted)');
    expect(requiresOf(strategy('multi:least-request:3,least-kv-cache:1'))).toEqual([
      'num_requests_running',
      'num_requests_waiting',
      'kv_cache_usage',
      'kv_cache_usage_cpu',
    ]);
    expect(requiresOf(strategy('multi:prefix-affinity:1'))).toEqual([]);
  });
});

describe('normalisation and weighted combination (ROUTE-3)', () => {
  it('normalises every scorer to [0,1], lowest raw value best', () => {
    expect(normalizeLowerBetter([2, 6, 4])).toEqual([1, 0, 0.5]);
    expect(normalizeLowerBetter([3, 3])).toEqual([1, 1]);
    const scores = normalizeLowerBetter([0.1, 10, 1000, 7]);
    for (const s of scores) expect(s >= 0 && s <= 1).toBe(true);
  });

  it('combines by weight and picks the best pod', () => {
    // a: few requests, full KV; b: more requests, empty KV; c: worst at both.
    const pods = [pod('a', m(1, 0, 0.9)), pod('b', m(3, 0, 0.1)), pod('c', m(5, 0, 1))];
    const s31 = strategy('multi:least-request:3,least-kv-cache:1');
    // least-request: a 1, b 0.5, c 0; least-kv-cache: a 1/9, b 1, c 0 → a 3.11, b 2.5, c 0.
    expect(combineScores(pods, s31.scorers, {}).map((x) => +x.toFixed(3))).toEqual([3.111, 2.5, 0]);
    expect(pick(s31, pods, {}, createPickState()).pod?.id).toBe('a');
    // Weighting KV heavier flips the choice.
    expect(pick(strategy('multi:least-request:1,least-kv-cache:3'), pods, {}, createPickState()).pod?.id).toBe('b');
  });

  it('least-request and least-kv-cache alone pick the lowest', () => {
    const pods = [pod('a', m(2, 2, 0.2)), pod('b', m(1, 0, 0.7)), pod('c', m(3, 1, 0.5, 0))];
    expect(pick(strategy('least-request'), pods, {}, createPickState()).pod?.id).toBe('b');
    expect(pick(strategy('least-kv-cache'), pods, {}, createPickState()).pod?.id).toBe('a');
  });

  it('breaks ties with the injected RNG, among ready pods only', () => {
    const pods = [pod('a', m(1, 0, 0)), pod('b', m(1, 0, 0)), pod('c', m(0, 0, 0), { ready: false })];
    expect(pick(strategy('least-request'), pods, {}, createPickState({ rng: seq(0) })).pod?.id).toBe('a');
    expect(pick(strategy('least-request'), pods, {}, createPickState({ rng: seq(0.99) })).pod?.id).toBe('b');
  });
});

describe('fallback to a random ready pod when metrics are missing (ROUTE-2)', () => {
  it('falls back, says which metrics, and picks with the RNG', () => {
    const pods = [pod('a', m(0, 0, 0)), pod('b', { num_requests_running: 1 }), pod('c', undefined, { ready: false })];
    const r = pick(strategy('least-request'), pods, {}, createPickState({ rng: seq(0.75) }));
    expect(r).toMatchObject({ fallback: true, missing: ['num_requests_waiting'], pod: { id: 'b' } });
    expect(r.reason).toContain('b');
  });

  it('multi falls back when any scorer lacks its metrics for a candidate', () => {
    const pods = [
      pod('a', { num_requests_running: 0, num_requests_waiting: 0 }),
      pod('b', { num_requests_running: 4, num_requests_waiting: 4 }),
    ];
    const r = pick(strategy('multi:least-request:3,least-kv-cache:1'), pods, {}, createPickState({ rng: seq(0.9) }));
    expect(r.fallback).toBe(true);
    expect(r.missing).toEqual(['kv_cache_usage', 'kv_cache_usage_cpu']);
    expect(r.pod?.id).toBe('b');
  });

  it('strategies without requirements never fall back; no ready pod → no pod', () => {
    const pods = [pod('a'), pod('b')];
    for (const s of ['random', 'round-robin', 'prefix-affinity', 'multi:prefix-affinity:1'])
      expect(pick(strategy(s), pods, {}, createPickState()).fallback).toBe(false);
    expect(pick(strategy('least-request'), [pod('a', undefined, { ready: false })], {}, createPickState())).toEqual({
      pod: undefined,
      fallback: false,
      reason: 'no ready pod',
    });
  });
});

describe('random and round-robin', () => {
  it('random takes the RNG slot among ready pods', () => {
    const pods = [pod('a'), pod('b', undefined, { ready: false }), pod('c')];
    expect(pick(strategy('random'), pods, {}, createPickState({ rng: seq(0.2) })).pod?.id).toBe('a');
    expect(pick(strategy('random'), pods, {}, createPickState({ rng: seq(0.6) })).pod?.id).toBe('c');
    expect(pick(strategy('random'), pods, {}, createPickState({ rng: () => 1 })).pod?.id).toBe('c');
  });

  it('round-robin cycles in order, one cursor per group', () => {
    const pods = [pod('a'), pod('b'), pod('c')];
    const state = createPickState();
    const rr = strategy('round-robin');
    const seen = [0, 1, 2, 3].map(() => pick(rr, pods, { group: 'm1' }, state).pod?.id);
    expect(seen).toEqual(['a', 'b', 'c', 'a']);
    expect(pick(rr, pods, { group: 'm2' }, state).pod?.id).toBe('a');
  });
});

describe('prefix affinity', () => {
  it('sticks a prefix to the pod that served it; new prefixes go to the least in-flight pod', () => {
    const state = createPickState({ rng: seq(0) });
    const pa = strategy('prefix-affinity');
    const pods = [
      pod('a', undefined, { inflight: 3 }),
      pod('b', undefined, { inflight: 1 }),
      pod('c', undefined, { inflight: 2 }),
    ];
    expect(pick(pa, pods, { group: 'g', prefixHash: 'h1' }, state).pod?.id).toBe('b');
    const busier = pods.map((p) => (p.id === 'b' ? { ...p, inflight: 9 } : p));
    expect(pick(pa, busier, { group: 'g', prefixHash: 'h1' }, state).pod?.id).toBe('b');
    expect(pick(pa, busier, { group: 'g', prefixHash: 'h2' }, state).pod?.id).toBe('c');
    // The same hash in another group is another prefix.
    expect(pick(pa, busier, { group: 'other', prefixHash: 'h1' }, state).pod?.id).toBe('c');
    // Its pod not ready → another pod takes it, and now holds it.
    const bDown = busier.map((p) => (p.id === 'b' ? { ...p, ready: false } : p));
    expect(pick(pa, bDown, { group: 'g', prefixHash: 'h1' }, state).pod?.id).toBe('c');
    expect(pick(pa, busier, { group: 'g', prefixHash: 'h1' }, state).pod?.id).toBe('c');
  });

  it('as a weighted scorer it pulls toward the prefix holder', () => {
    const state = createPickState();
    const pods = [pod('a', m(2, 0, 0)), pod('b', m(1, 0, 0))];
    state.prefixes.remember('g\u0000h', 'a');
    expect(
      pick(strategy('multi:least-request:1,prefix-affinity:2'), pods, { group: 'g', prefixHash: 'h' }, state).pod?.id,
    ).toBe('a');
    expect(
      pick(strategy('multi:least-request:3,prefix-affinity:2'), pods, { group: 'g', prefixHash: 'h' }, state).pod?.id,
    ).toBe('b');
  });

  it('the prefix table is bounded and evicts the least recently used', () => {
    const t = new PrefixTable(2);
    t.remember('x', 'a');
    t.remember('y', 'b');
    expect(t.get('x')).toBe('a'); // x is now the most recent
    t.remember('z', 'c');
    expect(t.size).toBe(2);
    expect(t.peek('y')).toBeUndefined();
    expect(t.peek('x')).toBe('a');
    t.forgetPod('a');
    expect(t.peek('x')).toBeUndefined();
    expect(() => new PrefixTable(0)).toThrow();
  });

  it('hashes the prompt prefix of chat and completion bodies', () => {
    const long = 'x'.repeat(600);
    const a = promptPrefixHash({ messages: [{ role: 'system', content: long + 'A' }] });
    const b = promptPrefixHash({ messages: [{ role: 'system', content: long + 'B' }] });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(promptPrefixHash({ prompt: 'hello' })).not.toBe(promptPrefixHash({ prompt: 'hellO' }));
    expect(promptPrefixHash({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] })).toBe(
      promptPrefixHash({ messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(promptPrefixHash({ model: 'm' })).toBeUndefined();
  });
});

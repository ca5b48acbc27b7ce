import { describe, expect, it } from 'vitest';
import { type KeySpace, KeySpaceError } from '../../src-router/kv/keyspace';
import {
  buildRoutingView,
  checkWriteGate,
  DEFAULT_MULTI_SPEC,
  LiveRoutingModule,
  MULTI_MESSAGES,
  type PodSnapshot,
  STRATEGIES,
} from '../../src-router/routing';

/** A tiny in-memory keyspace with a settable clock (TTL) and an outage switch. */
class MemoryKeySpace implements KeySpace {
  readonly kind = 'embedded' as const;
  private readonly data = new Map<string, { value: string; expiresAt?: number }>();
  down = false;
  reachable = true;
  constructor(public clock: { now: number }) {}
  private check(): void {
    this.reachable = !this.down;
    if (this.down) throw new KeySpaceError('connection refused');
  }
  private live(key: string) {
    const e = this.data.get(key);
    if (e?.expiresAt !== undefined && e.expiresAt <= this.clock.now) this.data.delete(key);
    return this.data.get(key);
  }
  async get(key: string) {
    this.check();
    return this.live(key)?.value ?? null;
  }
  async set(key: string, value: string, opts?: { ttlMs?: number }) {
    this.check();
    this.data.set(key, { value, expiresAt: opts?.ttlMs !== undefined ? this.clock.now + opts.ttlMs : undefined });
  }
  async del(key: string) {
    this.check();
    this.data.delete(key);
  }
  async pttl(key: string) {
    this.check();
    const e = this.live(key);
    return !e ? -2 : e.expiresAt === undefined ? -1 : e.expiresAt - this.clock.now;
  }
  async close() {}
}

const KEY = 'clutchcall:inference:routing';

function setup(opts: { defaultStrategy?: string } = {}) {
  const clock = { now: 1_000_000 };
  const kv = new MemoryKeySpace(clock);
  const applied: string[] = [];
  const mod = new LiveRoutingModule({
    keyspace: kv,
    pollMs: 5_000,
    now: () => clock.now,
    rng: () => 0,
    onApplied: (a) => applied.push(a.strategy.spec),
    ...opts,
  });
  return { clock, kv, mod, applied };
}

describe('live routing module: desired → effective (ROUTE-6)', () => {
  it('without desired state: config default, beacon written with TTL on pollNow', async () => {
    const { kv, mod } = setup();
    await mod.pollNow();
    expect(JSON.parse((await kv.get(`${KEY}.effective`))!)).toEqual({
      strategy: 'round-robin',
      routes_engine: null,
      source: 'config_default',
    });
    expect(await kv.pttl(`${KEY}.effective`)).toBe(15_000);
    expect(mod.status()).toMatchObject({ reporting: true, lastError: null, desired: null });
  });

  it('applies published desired state on the next poll, without restart', async () => {
    const { kv, mod, applied } = setup();
    await mod.pollNow();
    await kv.set(KEY, JSON.stringify({ strategy: DEFAULT_MULTI_SPEC, routes_engine: 'clutch-layers' }));
    expect(mod.current().strategy.name).toBe('round-robin');
    await mod.pollNow();
    expect(mod.current()).toMatchObject({
      strategy: { name: 'multi', spec: DEFAULT_MULTI_SPEC },
      routesEngine: 'clutch-layers',
      source: 'routing_key',
    });
    expect(JSON.parse((await kv.get(`${KEY}.effective`))!)).toEqual({
      strategy: DEFAULT_MULTI_SPEC,
      routes_engine: 'clutch-layers',
      source: 'routing_key',
    });
    expect(applied).toEqual([DEFAULT_MULTI_SPEC]);
    await mod.pollNow();
    expect(applied).toHaveLength(1); // logged once, when committed
  });

  it('the beacon expires when no module republishes it', async () => {
    const { clock, kv, mod } = setup();
    await mod.pollNow();
    clock.now += 14_999;
    expect(await kv.get(`${KEY}.effective`)).not.toBeNull();
    clock.now += 2;
    expect(await kv.get(`${KEY}.effective`)).toBeNull();
    expect((await mod.routingView({ writable: true, canWrite: true })).engineReporting).toBe(false);
  });

  it('invalid desired → keeps the last valid strategy, source fallback_invalid_spec', async () => {
    const { kv, mod } = setup();
    await kv.set(KEY, JSON.stringify({ strategy: 'least-request' }));
    await mod.pollNow();
    await kv.set(KEY, JSON.stringify({ strategy: 'multi:least-request:0' }));
    await mod.pollNow();
    expect(mod.current()).toMatchObject({
      strategy: { name: 'least-request' },
      source: 'fallback_invalid_spec',
      invalidReason: MULTI_MESSAGES.weight('least-request'),
    });
    expect(JSON.parse((await kv.get(`${KEY}.effective`))!)).toEqual({
      strategy: 'least-request',
      routes_engine: null,
      source: 'fallback_invalid_spec',
    });
    await kv.set(KEY, 'not json');
    await mod.pollNow();
    expect(mod.current()).toMatchObject({ strategy: { name: 'least-request' }, source: 'fallback_invalid_spec' });
  });

  it('invalid desired with nothing applied before → config default, said so', async () => {
    const { kv, mod } = setup({ defaultStrategy: 'random' });
    await kv.set(KEY, JSON.stringify({ strategy: 'fastest' }));
    await mod.pollNow();
    expect(mod.status().effective).toEqual({
      strategy: 'random',
      routes_engine: null,
      source: 'fallback_invalid_spec',
    });
  });

  it('keyspace outage: keeps the last strategy, reporting false, routing goes on, recovers', async () => {
    const { kv, mod } = setup();
    await kv.set(KEY, JSON.stringify({ strategy: 'least-request' }));
    await mod.pollNow();
    kv.down = true;
    await mod.pollNow();
    expect(mod.status()).toMatchObject({
      reporting: false,
      lastError: 'connection refused',
      effective: { strategy: 'least-request' },
    });
    const pods: PodSnapshot[] = [
      { id: 'a', ready: true, inflight: 0, metrics: { num_requests_running: 3, num_requests_waiting: 0 } },
      { id: 'b', ready: true, inflight: 0, metrics: { num_requests_running: 0, num_requests_waiting: 0 } },
    ];
    expect(mod.pick(pods).pod?.id).toBe('b');
    const view = await mod.routingView({ writable: true, canWrite: true });
    expect(view).toMatchObject({ engineReporting: false, keyspaceReachable: false, desired: null });
    kv.down = false;
    await mod.pollNow();
    expect(mod.status()).toMatchObject({ reporting: true, lastError: null });
    expect(await kv.get(`${KEY}.effective`)).not.toBeNull();
  });

  it('counts fallback picks', async () => {
    const seen: string[] = [];
    const { mod } = setup({ defaultStrategy: 'least-kv-cache' });
    const m2 = new LiveRoutingModule({
      keyspace: new MemoryKeySpace({ now: 0 }),
      defaultStrategy: 'least-kv-cache',
      rng: () => 0,
      onFallback: (r) => seen.push(r.reason ?? ''),
    });
    const pods: PodSnapshot[] = [
      { id: 'a', ready: true, inflight: 0 },
      { id: 'b', ready: true, inflight: 0 },
    ];
    expect(mod.pick(pods)).toMatchObject({ fallback: true, pod: { id: 'a' } });
    mod.pick(pods);
    expect(mod.status().fallbackCount).toBe(2);
    m2.pick(pods);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain('kv_cache_usage');
  });

  it('rejects an invalid config default strategy at construction', () => {
    expect(() => setup({ defaultStrategy: 'fastest' })).toThrow(/routing\.strategy/);
  });
});

describe('runtime.routing view and setRouting (ROUTE-1, 3, 5..8)', () => {
  it('builds the view: strategies from data, desired, effective, inSync', async () => {
    const { mod } = setup();
    let view = await mod.routingView({ writable: true, canWrite: false });
    expect(view).toMatchObject({
      desired: null,
      effective: null,
      engineReporting: false,
      inSync: true,
      writable: true,
      canWrite: false,
      defaultMultiSpec: DEFAULT_MULTI_SPEC,
    });
    expect(view.strategies.map((s) => s.name)).toEqual(STRATEGIES.map((s) => s.name));
    expect(view.multiScorers).toEqual(['least-request', 'least-kv-cache', 'prefix-affinity']);
    await mod.pollNow();
    await mod.setRouting({ strategy: 'least-request' });
    view = await mod.routingView({ writable: true, canWrite: true });
    expect(view).toMatchObject({
      desired: { strategy: 'least-request', routes_engine: null },
      effective: { strategy: 'round-robin', source: 'config_default' },
      engineReporting: true,
      inSync: false,
    });
    await mod.pollNow();
    view = await mod.routingView({ writable: true, canWrite: true });
    expect(view).toMatchObject({ effective: { strategy: 'least-request', source: 'routing_key' }, inSync: true });
  });

  it('setRouting validates with the ROUTE-3 messages and writes nothing when invalid', async () => {
    const { kv, mod } = setup();
    expect(await mod.setRouting({ strategy: 'multi:least-request:3,,least-kv-cache:1' })).toEqual({
      ok: false,
      field: 'strategy',
      message: MULTI_MESSAGES.emptyEntry,
    });
    expect(await mod.setRouting({ strategy: 'least-request', routesEngine: 'vllm' })).toMatchObject({
      ok: false,
      field: 'routesEngine',
    });
    expect(await kv.get(KEY)).toBeNull();
  });

  it('publishes routes_engine only when picked, and never rewrites one that was not touched (ROUTE-5)', async () => {
    const { kv, mod } = setup();
    await mod.setRouting({ strategy: 'least-request' });
    expect(JSON.parse((await kv.get(KEY))!)).toEqual({ strategy: 'least-request' });
    await mod.setRouting({ strategy: DEFAULT_MULTI_SPEC, routesEngine: 'clutch-layers' });
    expect(JSON.parse((await kv.get(KEY))!)).toEqual({ strategy: DEFAULT_MULTI_SPEC, routes_engine: 'clutch-layers' });
    await mod.setRouting({ strategy: 'random' });
    expect(JSON.parse((await kv.get(KEY))!)).toEqual({ strategy: 'random', routes_engine: 'clutch-layers' });
    expect(await kv.pttl(KEY)).toBe(-1);
  });

  it('inSync compares the requested profile too; pure view from raw values', () => {
    const base = { routingKey: KEY, strategies: STRATEGIES, writable: true, canWrite: true };
    const eff = JSON.stringify({ strategy: 'random', routes_engine: null, source: 'routing_key' });
    expect(
      buildRoutingView({
        ...base,
        desiredRaw: JSON.stringify({ strategy: 'random', routes_engine: 'clutch-layers' }),
        effectiveRaw: eff,
      }).inSync,
    ).toBe(false);
    expect(
      buildRoutingView({ ...base, desiredRaw: JSON.stringify({ strategy: 'random' }), effectiveRaw: eff }).inSync,
    ).toBe(true);
    expect(buildRoutingView({ ...base, desiredRaw: null, effectiveRaw: '{"broken' })).toMatchObject({
      effective: null,
      engineReporting: false,
    });
  });

  it('write gates name the gate', () => {
    expect(checkWriteGate({ writable: true, canWrite: true })).toBeNull();
    expect(checkWriteGate({ writable: false, canWrite: true })).toMatchObject({
      gate: 'console.routing_writes_enabled',
      code: 'routing_read_only',
    });
    expect(checkWriteGate({ writable: false, canWrite: false })?.message).toContain('console.routing_writes_enabled');
    expect(checkWriteGate({ writable: true, canWrite: false })).toMatchObject({ gate: 'console.operators' });
    expect(checkWriteGate({ writable: true, canWrite: false })?.message).toMatch(/^Read-only for your account/);
  });
});

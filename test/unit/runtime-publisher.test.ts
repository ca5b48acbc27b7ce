import { afterEach, describe, expect, it, vi } from 'vitest';
import { EmbeddedKeySpace, KeySpaceError } from '../../src-router/kv';
import {
  buildRuntimeBlob,
  type GpuStats,
  type HostStats,
  RUNTIME_BLOB_KEY,
  type RuntimeBlob,
  RuntimePublisher,
  readRuntimeHealth,
  runtimeBlobSchema,
  runtimeHealthSchema,
  type ServingConfig,
} from '../../src-router/runtime';

const HOST: HostStats = {
  host: 'box',
  cpu: { model: 'Ryzen', cores: 16, load: 12.5, loadavg: 2 },
  memory: { total: 64e9, used: 20e9, pageCache: 8e9, swap: 0 },
};
const GPU: GpuStats = {
  name: 'RTX 4090',
  utilization: 40,
  vramUsed: 1e9,
  vramTotal: 24e9,
  temperature: 60,
  power: 200,
  powerCap: 450,
};
const SERVING: ServingConfig = { servedModel: 'qwen', tensorParallel: 1, maxModelLen: 8192, dtype: 'q4_k_m' };
const TESTS = [{ name: 'store writable', detail: '/s writable', ms: 1.2, status: 'pass' as const }];

describe('runtime blob', () => {
  it('a blob built without GPU has no gpu key at all; nothing absent becomes a zero', () => {
    const blob = buildRuntimeBlob({ version: '0.1.0', uptimeMs: 1500.4, host: { host: 'box', cpu: { cores: 2 } } });
    expect(blob).toEqual({ host: 'box', version: '0.1.0', uptime: 1500, cpu: { cores: 2 } });
    for (const k of ['gpu', 'engine', 'memory', 'selfTests', 'servingConfig']) expect(k in blob).toBe(false);
    expect(JSON.parse(JSON.stringify(blob))).toEqual(blob);
  });

  it('an empty GPU reading, NaN values and empty serving config are left out too', () => {
    const blob = buildRuntimeBlob({
      gpu: {},
      host: { memory: { total: Number.NaN } },
      servingConfig: {},
      mappedModels: undefined,
    });
    expect(blob).toEqual({});
  });

  it('cpu repeats tensor-parallel width and max context from the serving config; mapped models go to memory', () => {
    const blob = buildRuntimeBlob({
      version: 'v',
      engine: 'llama-node',
      uptimeMs: 10,
      host: HOST,
      gpu: GPU,
      selfTests: TESTS,
      servingConfig: SERVING,
      mappedModels: 2,
    });
    expect(blob.cpu).toEqual({ ...HOST.cpu, tensorParallel: 1, maxContext: 8192 });
    expect(blob.memory).toEqual({ ...HOST.memory, mappedModels: 2 });
    expect(blob.servingConfig).toEqual(SERVING);
    expect('gpuMemUtil' in blob.servingConfig!).toBe(false);
    expect(blob.gpu).toEqual(GPU);
    expect(blob.selfTests).toEqual(TESTS);
    expect(runtimeBlobSchema.parse(blob)).toEqual(blob);
  });
});

function setup(over: Partial<ConstructorParameters<typeof RuntimePublisher>[0]> = {}) {
  let t = 1_000_000;
  const ks = new EmbeddedKeySpace({ now: () => t, sweepIntervalMs: 0 });
  const onError = vi.fn();
  const pub = new RuntimePublisher({
    keyspace: ks,
    version: '0.1.0',
    engine: 'llama-node',
    startedAt: t - 5000,
    readHost: async () => HOST,
    now: () => t,
    onError,
    ...over,
  });
  return { ks, pub, onError, advance: (ms: number) => (t += ms) };
}

const stored = async (ks: EmbeddedKeySpace): Promise<RuntimeBlob> => JSON.parse((await ks.get(RUNTIME_BLOB_KEY))!);

describe('runtime publisher', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes the blob as JSON at clutchcall:inference:runtime with a TTL of three intervals', async () => {
    const { ks, pub } = setup({
      intervalMs: 10_000,
      selfTests: TESTS,
      servingConfig: () => SERVING,
      readGpu: async () => GPU,
      mappedModels: () => 1,
    });
    const blob = await pub.publishNow();
    expect(RUNTIME_BLOB_KEY).toBe('clutchcall:inference:runtime');
    expect(await stored(ks)).toEqual(blob);
    expect(blob).toMatchObject({
      host: 'box',
      version: '0.1.0',
      engine: 'llama-node',
      uptime: 5000,
      gpu: GPU,
      selfTests: TESTS,
      servingConfig: SERVING,
    });
    expect(await ks.pttl(RUNTIME_BLOB_KEY)).toBe(30_000);
  });

  it('without a GPU reader, engine or loaded model those keys are absent from the stored JSON', async () => {
    const { ks, pub } = setup({ engine: undefined, servingConfig: () => undefined, readGpu: async () => undefined });
    await pub.publishNow();
    const blob = await stored(ks);
    expect(Object.keys(blob).sort()).toEqual(['cpu', 'host', 'memory', 'uptime', 'version']);
    expect(blob.cpu).toEqual(HOST.cpu);
  });

  it('refreshing keeps the blob alive and current; a publisher that stops lets it expire', async () => {
    let served: ServingConfig | undefined;
    const { ks, pub, advance } = setup({ intervalMs: 1000, servingConfig: () => served });
    await pub.publishNow();
    advance(2500);
    served = SERVING;
    await pub.publishNow();
    expect(await ks.pttl(RUNTIME_BLOB_KEY)).toBe(3000);
    expect((await stored(ks)).servingConfig).toEqual(SERVING);
    expect((await stored(ks)).uptime).toBe(7500);
    advance(2999);
    expect(await ks.get(RUNTIME_BLOB_KEY)).not.toBeNull();
    advance(1);
    expect(await readRuntimeHealth(ks)).toEqual({ published: false });
  });

  it('start publishes at once, then on every interval (unref timer); stop ends it and can remove the blob', async () => {
    vi.useFakeTimers();
    const { ks, pub, onError } = setup({ intervalMs: 1000, now: () => Date.now(), startedAt: Date.now() });
    await pub.start();
    expect(pub.running).toBe(true);
    expect((await stored(ks)).uptime).toBe(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect((await stored(ks)).uptime).toBe(1000);
    await vi.advanceTimersByTimeAsync(2000);
    expect((await stored(ks)).uptime).toBe(3000);
    await pub.stop({ remove: true });
    expect(pub.running).toBe(false);
    expect(await ks.get(RUNTIME_BLOB_KEY)).toBeNull();
    await vi.advanceTimersByTimeAsync(5000);
    expect(await ks.get(RUNTIME_BLOB_KEY)).toBeNull();
    expect(onError).not.toHaveBeenCalled();
  });

  it('with changeCheckMs, a changed serving config or mapped-model count is republished at the next check, not the next period', async () => {
    vi.useFakeTimers();
    let served: ServingConfig | undefined;
    let mapped = 0;
    const { ks, pub } = setup({
      intervalMs: 10_000,
      changeCheckMs: 500,
      now: () => Date.now(),
      startedAt: Date.now(),
      servingConfig: () => served,
      mappedModels: () => mapped,
    });
    await pub.start();
    expect((await stored(ks)).servingConfig).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1000);
    expect((await stored(ks)).uptime).toBe(0); // nothing changed: no extra publish
    served = SERVING;
    mapped = 1;
    await vi.advanceTimersByTimeAsync(500);
    expect(await stored(ks)).toMatchObject({ uptime: 1500, servingConfig: SERVING, memory: { mappedModels: 1 } });
    await pub.stop();
    served = undefined;
    await vi.advanceTimersByTimeAsync(1000);
    expect((await stored(ks)).servingConfig).toEqual(SERVING);
  });

  it('a keyspace failure rejects publishNow, goes to onError from start, and never throws out of the timer', async () => {
    const { ks, pub, onError } = setup();
    await ks.close();
    await expect(pub.publishNow()).rejects.toBeInstanceOf(KeySpaceError);
    await pub.start();
    expect(onError).toHaveBeenCalledWith(expect.any(KeySpaceError));
    await pub.stop();
  });

  it('concurrent publishes join one write; failing readers leave their part absent', async () => {
    const { pub } = setup({
      readGpu: () => Promise.reject(new Error('smi crashed')),
      readHost: () => Promise.reject(new Error('no os')),
    });
    const [a, b] = await Promise.all([pub.publishNow(), pub.publishNow()]);
    expect(a).toBe(b);
    expect(a).toEqual({ version: '0.1.0', uptime: 5000, engine: 'llama-node' });
  });

  it('refuses a non-positive interval', () => {
    expect(() => setup({ intervalMs: 0 })).toThrow(RangeError);
  });
});

describe('readRuntimeHealth', () => {
  it('absent blob → published false without a reason', async () => {
    const ks = new EmbeddedKeySpace();
    expect(await readRuntimeHealth(ks)).toEqual({ published: false });
  });

  it('invalid JSON or a blob that is not an object → published false with a reason', async () => {
    const ks = new EmbeddedKeySpace();
    await ks.set(RUNTIME_BLOB_KEY, '{not json');
    const bad = await readRuntimeHealth(ks);
    expect(bad.published).toBe(false);
    expect(bad).toMatchObject({ reason: expect.stringMatching(/not valid JSON/) });
    await ks.set(RUNTIME_BLOB_KEY, '[]');
    expect(await readRuntimeHealth(ks)).toEqual({ published: false, reason: 'runtime blob is not a JSON object' });
  });

  it('RT-2: one malformed field is dropped and named; the rest of the blob still shows, a self-test keeps what it has', async () => {
    const ks = new EmbeddedKeySpace();
    const blob = {
      host: 'h',
      uptime: -5,
      gpu: { utilization: 'high', name: 'RTX' },
      selfTests: [
        { name: 'ok', detail: 'd', ms: 1, status: 'pass' },
        { name: 'no ms', detail: 'd', status: 'warn' },
        { name: 'odd', ms: 'slow', status: 3 },
        'junk',
      ],
      servingConfig: 'none',
      cpu: { cores: 2 },
    };
    await ks.set(RUNTIME_BLOB_KEY, JSON.stringify(blob));
    const health = await readRuntimeHealth(ks);
    expect(health).toEqual({
      published: true,
      blob: {
        host: 'h',
        gpu: { name: 'RTX' },
        cpu: { cores: 2 },
        selfTests: [
          { name: 'ok', detail: 'd', ms: 1, status: 'pass' },
          { name: 'no ms', detail: 'd', status: 'warn' },
          { name: 'odd' },
          {},
        ],
      },
      malformed: expect.arrayContaining([
        'uptime',
        'gpu.utilization',
        'selfTests.1.ms',
        'selfTests.2.detail',
        'selfTests.2.ms',
        'selfTests.2.status',
        'selfTests.3',
        'servingConfig',
      ]),
    });
    expect(runtimeHealthSchema.parse(health)).toEqual(health);
  });

  it('a valid blob → published true with the blob as published (absent fields absent, unknown keys dropped)', async () => {
    const ks = new EmbeddedKeySpace();
    const blob = { host: 'h', selfTests: [{ name: 'x', detail: 'd', ms: 3, status: 'degraded' }], extra: 1 };
    await ks.set(RUNTIME_BLOB_KEY, JSON.stringify(blob));
    const health = await readRuntimeHealth(ks);
    expect(health).toEqual({ published: true, blob: { host: 'h', selfTests: blob.selfTests } });
    expect(runtimeHealthSchema.parse(health)).toEqual(health);
  });

  it('reads another key when asked, and reports an unreachable keyspace as not published with the reason', async () => {
    const ks = new EmbeddedKeySpace();
    await ks.set('node-b:runtime', JSON.stringify({ version: '2' }));
    expect(await readRuntimeHealth(ks, 'node-b:runtime')).toEqual({ published: true, blob: { version: '2' } });
    await ks.close();
    expect(await readRuntimeHealth(ks)).toMatchObject({
      published: false,
      reason: expect.stringMatching(/^keyspace unavailable/),
    });
  });
});

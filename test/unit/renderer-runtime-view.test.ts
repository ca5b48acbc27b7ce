import { describe, expect, it } from 'vitest';
import {
  bannerView,
  cpuCardView,
  DISPLAY_FLOOR,
  gpuCardView,
  malformedNote,
  memoryCardView,
  NO_SELF_TESTS,
  NO_SERVING_CONFIG,
  NOTHING_PUBLISHED_NOTE,
  nominalPill,
  runtimeSections,
  selfTestRows,
  servingConfigRows,
  testTone,
} from '../../src-renderer/src/runtime/runtime-view';
import type { RuntimeBlob, SelfTestResult } from '../../src-router/contract';

// View-models of the Runtime screen (RT-1..6): straight from the blob, nothing filled in.

const GiB = 1024 ** 3;
const test_ = (name: string, status: string, ms = 1): SelfTestResult => ({
  name,
  detail: `${name} detail`,
  ms,
  status,
});

const fullBlob: RuntimeBlob = {
  host: 'gpu-box-1',
  version: '2.4.0',
  uptime: 3_725_000,
  engine: 'clutch-layers',
  gpu: {
    name: 'NVIDIA L4',
    utilization: 63,
    vramUsed: 12 * GiB,
    vramTotal: 24 * GiB,
    temperature: 55,
    power: 60,
    powerCap: 72,
  },
  cpu: { model: 'AMD EPYC 7B13', cores: 16, load: 21, loadavg: 2.5, tensorParallel: 2, maxContext: 32_768 },
  memory: { total: 64 * GiB, used: 16 * GiB, mappedModels: 2, pageCache: 8 * GiB, swap: 0 },
  selfTests: [test_('gpu visible', 'pass'), test_('weights readable', 'warn', 900), test_('kv pool', 'fail')],
  servingConfig: {
    servedModel: 'llama-3-8b',
    tensorParallel: 2,
    gpuMemUtil: 0.9,
    maxModelLen: 32_768,
    dtype: 'bfloat16',
  },
};

describe('runtime sections (RT-1)', () => {
  it('absent blob → only the note (with the reason when there is one); the page keeps the Routing card itself', () => {
    expect(runtimeSections({ published: false })).toEqual({
      published: false,
      note: NOTHING_PUBLISHED_NOTE,
      reason: null,
    });
    expect(runtimeSections({ published: false, reason: 'keyspace unavailable: down' })).toMatchObject({
      published: false,
      reason: 'keyspace unavailable: down',
    });
    expect(NOTHING_PUBLISHED_NOTE).toContain('publishes no runtime stats');
    expect(runtimeSections({ published: true, blob: fullBlob })).toEqual({
      published: true,
      blob: fullBlob,
      malformedNote: null,
    });
  });

  it('RT-2: a blob with malformed fields still shows; the dropped fields are named once', () => {
    expect(
      runtimeSections({ published: true, blob: { host: 'h' }, malformed: ['selfTests.1.ms', 'gpu.utilization'] }),
    ).toEqual({
      published: true,
      blob: { host: 'h' },
      malformedNote: 'The published blob has malformed fields, shown as —: selfTests.1.ms, gpu.utilization.',
    });
    expect(malformedNote([])).toBeNull();
  });
});

describe('host banner (RT-3)', () => {
  it('host, version, uptime, engine from the blob; no listener field', () => {
    const b = bannerView(fullBlob);
    expect(b).toMatchObject({ host: 'gpu-box-1', version: '2.4.0', uptime: '1h 2m', engine: 'clutch-layers' });
    expect(Object.keys(b).sort()).toEqual(['engine', 'host', 'nominal', 'uptime', 'version']);
  });

  it('absent fields: — for host, version, uptime; `not reported` for the engine; no pill without tests', () => {
    expect(bannerView({})).toEqual({ host: '—', version: '—', uptime: '—', engine: 'not reported', nominal: null });
    expect(bannerView({ engine: '  ', selfTests: [] })).toMatchObject({ engine: 'not reported', nominal: null });
  });

  it('systems-nominal pill = passed / all', () => {
    expect(nominalPill([test_('a', 'pass'), test_('b', 'pass')])).toEqual({
      label: 'systems nominal 2/2',
      tone: 'ok',
      passed: 2,
      total: 2,
    });
    expect(nominalPill([test_('a', 'pass'), test_('b', 'warn')])).toEqual({
      label: '1/2 self-tests pass',
      tone: 'busy',
      passed: 1,
      total: 2,
    });
    expect(nominalPill(fullBlob.selfTests)).toEqual({ label: '1/3 self-tests pass', tone: 'bad', passed: 1, total: 3 });
    expect(nominalPill(undefined)).toBeNull();
    expect(nominalPill([])).toBeNull();
  });
});

describe('gauge cards (RT-4)', () => {
  it('GPU: name with the CUDA tag, utilisation donut, VRAM / temperature / power against real denominators', () => {
    const g = gpuCardView(fullBlob.gpu);
    expect(g.name).toBe('NVIDIA L4');
    expect(g.tags).toEqual(['CUDA']);
    expect(g.donut).toMatchObject({ label: '63%', reported: true });
    const rows = Object.fromEntries(g.rows.map((r) => [r.key, r.meter]));
    expect(rows.vram).toMatchObject({ fill: 0.5, label: '12.0 GiB / 24.0 GiB', relative: false });
    expect(rows.temperature).toMatchObject({ fill: 0.55, label: '55 °C', relative: false });
    expect(rows.power.label).toBe('60 W / 72 W');
    expect(rows.power.fill).toBeCloseTo(60 / 72);
  });

  it('GPU absent: —, donut not reported, no CUDA tag, no zeros', () => {
    const g = gpuCardView(undefined);
    expect(g.name).toBe('—');
    expect(g.tags).toEqual([]);
    expect(g.donut).toEqual({ percent: 0, label: '—', sub: 'not reported', reported: false });
    expect(g.rows.map((r) => r.meter.label)).toEqual(['—', '—', '—']);
    expect(g.rows.every((r) => !r.meter.reported && r.meter.fill === 0)).toBe(true);
  });

  it('CUDA only when a device is named: stats without a name get no tag', () => {
    expect(gpuCardView({ utilization: 10 }).tags).toEqual([]);
    expect(gpuCardView({ name: '' }).tags).toEqual([]);
    expect(gpuCardView({ vramUsed: GiB }).rows[0].meter.label).toBe('1.0 GiB / —');
  });

  it('CPU: model, cores, load donut, loadavg / tensor parallel / max context (thousands) as relative bars', () => {
    const c = cpuCardView(fullBlob.cpu);
    expect(c).toMatchObject({ name: 'AMD EPYC 7B13', detail: '16 cores', tags: [] });
    expect(c.donut.label).toBe('21%');
    const rows = Object.fromEntries(c.rows.map((r) => [r.key, r.meter]));
    expect(rows.loadavg).toMatchObject({ label: '2.5', fill: 2.5 / DISPLAY_FLOOR.loadavg, relative: true });
    expect(rows['tensor-parallel']).toMatchObject({
      label: '2',
      fill: 2 / DISPLAY_FLOOR.tensorParallel,
      relative: true,
    });
    expect(rows['max-context']).toMatchObject({ label: '32.8k', fill: 1, relative: true });
    expect(cpuCardView({ cores: 1 }).detail).toBe('1 core');
  });

  it('CPU absent fields are —, never 0', () => {
    const c = cpuCardView({ model: 'x' });
    expect(c.detail).toBe('— cores');
    expect(c.donut.label).toBe('—');
    expect(c.rows.map((r) => r.meter.label)).toEqual(['—', '—', '—']);
  });

  it('memory: total, used donut, models mapped / page cache / swap as relative bars', () => {
    const m = memoryCardView(fullBlob.memory);
    expect(m.name).toBe('64.0 GiB total');
    expect(m.donut).toEqual({ percent: 25, label: '25%', sub: '16.0 GiB of 64.0 GiB', reported: true });
    const rows = Object.fromEntries(m.rows.map((r) => [r.key, r.meter]));
    expect(rows['mapped-models']).toMatchObject({ label: '2', fill: 2 / DISPLAY_FLOOR.mappedModels, relative: true });
    expect(rows['page-cache']).toMatchObject({ label: '8.0 GiB', fill: 0.5, relative: true });
    expect(rows.swap).toMatchObject({ label: '0 B', fill: 0, reported: true });
  });

  it('memory without a total: donut 0% and not reported, never NaN%', () => {
    const m = memoryCardView({ used: 4 * GiB });
    expect(m.name).toBe('—');
    expect(m.donut).toEqual({ percent: 0, label: '0%', sub: 'not reported', reported: false });
    expect(JSON.stringify(memoryCardView(undefined))).not.toContain('NaN');
  });
});

describe('serving config (RT-5)', () => {
  it('every row from the blob, in order', () => {
    expect(servingConfigRows(fullBlob.servingConfig).map((r) => [r.label, r.value])).toEqual([
      ['Served model', 'llama-3-8b'],
      ['Tensor parallel', '2'],
      ['GPU memory use', '90%'],
      ['Max context', '32,768 tokens'],
      ['Dtype', 'bfloat16'],
    ]);
  });

  it('absent rows are hidden, never defaulted; none → the empty message', () => {
    expect(servingConfigRows({ servedModel: 'm', maxModelLen: 8192 }).map((r) => r.key)).toEqual([
      'servedModel',
      'maxModelLen',
    ]);
    expect(servingConfigRows({})).toEqual([]);
    expect(servingConfigRows(undefined)).toEqual([]);
    expect(NO_SERVING_CONFIG).toContain('engine did not report serving config');
  });
});

describe('self-tests (RT-6)', () => {
  it('in published order with name, detail, ms, status; pass green, warn amber, anything else red', () => {
    const rows = selfTestRows(fullBlob.selfTests);
    expect(rows.map((r) => [r.name, r.detail, r.ms, r.status, r.tone])).toEqual([
      ['gpu visible', 'gpu visible detail', '1 ms', 'pass', 'pass'],
      ['weights readable', 'weights readable detail', '900 ms', 'warn', 'warn'],
      ['kv pool', 'kv pool detail', '1 ms', 'fail', 'fail'],
    ]);
    expect(testTone('error')).toBe('fail');
    expect(testTone('PASS')).toBe('fail');
  });

  it('RT-2: an entry shows what it has; an absent field is —, an absent status is not a pass', () => {
    const rows = selfTestRows([{ name: 'no ms', detail: 'd', status: 'warn' }, { name: 'odd' }, {}]);
    expect(rows.map((r) => [r.name, r.detail, r.ms, r.status, r.tone])).toEqual([
      ['no ms', 'd', '—', 'warn', 'warn'],
      ['odd', '—', '—', '—', 'fail'],
      ['—', '—', '—', '—', 'fail'],
    ]);
    expect(nominalPill([{ name: 'a', status: 'pass' }, {}])).toMatchObject({
      passed: 1,
      total: 2,
      label: '1/2 self-tests pass',
    });
  });

  it('no tests → no rows (the card says so)', () => {
    expect(selfTestRows(undefined)).toEqual([]);
    expect(selfTestRows([])).toEqual([]);
    expect(NO_SELF_TESTS.toLowerCase()).toContain('no self-tests reported');
  });
});

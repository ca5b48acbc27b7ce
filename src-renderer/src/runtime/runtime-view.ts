import type {
  CpuStats,
  GpuStats,
  MemoryStats,
  RuntimeBlobView as RuntimeBlob,
  RuntimeHealth,
  SelfTestEntry,
  ServingConfig,
} from '../../../src-router/contract';
import { DASH, orDash, type PillTone } from '../format';
import {
  capacityMeter,
  type Donut,
  formatBytes,
  formatDurationMs,
  formatFraction,
  formatNumber,
  formatTestMs,
  formatThousands,
  formatTokens,
  type Meter,
  NOT_REPORTED,
  percentDonut,
  ratioDonut,
  relativeMeter,
} from './runtime-format';

/**
 * View-models of the Runtime screen (RT-1..6), pure: what each part shows, straight from the published blob.
 * Nothing is filled in: an absent field is `—` (RT-2). Tested in test/unit/renderer-runtime-view.test.ts.
 */

/** Which parts of the screen show: with no blob only the note (and the Routing card, which reads elsewhere). */
export type RuntimeSections =
  | { published: false; note: string; reason: string | null }
  | { published: true; blob: RuntimeBlob; malformedNote: string | null };

export const NOTHING_PUBLISHED_NOTE =
  'The engine publishes no runtime stats: nothing is published at clutchcall:inference:runtime.';

export function runtimeSections(health: RuntimeHealth): RuntimeSections {
  if (!health.published) return { published: false, note: NOTHING_PUBLISHED_NOTE, reason: health.reason ?? null };
  return { published: true, blob: health.blob, malformedNote: malformedNote(health.malformed) };
}

/** RT-2: the fields the node dropped as malformed (they show `—`), named once above the screen; null when none. */
export function malformedNote(paths: readonly string[] | undefined): string | null {
  if (!paths || paths.length === 0) return null;
  return `The published blob has malformed fields, shown as —: ${paths.join(', ')}.`;
}

export interface NominalPill {
  label: string;
  tone: PillTone;
  passed: number;
  total: number;
}

export interface BannerView {
  host: string;
  version: string;
  uptime: string;
  engine: string;
  /** Passed over all self-tests; null without tests (no pill then). */
  nominal: NominalPill | null;
}

/** `pass` counts; `warn` is amber; anything else — an absent or malformed status too — is a failure (RT-6). */
export type TestTone = 'pass' | 'warn' | 'fail';
export const testTone = (status: string | undefined): TestTone =>
  status === 'pass' ? 'pass' : status === 'warn' ? 'warn' : 'fail';

/** The systems-nominal pill (RT-3): passed / all, only with at least one test. */
export function nominalPill(tests: readonly SelfTestEntry[] | undefined): NominalPill | null {
  if (!tests || tests.length === 0) return null;
  const passed = tests.filter((t) => testTone(t.status) === 'pass').length;
  const total = tests.length;
  if (passed === total) return { label: `systems nominal ${passed}/${total}`, tone: 'ok', passed, total };
  const anyFail = tests.some((t) => testTone(t.status) === 'fail');
  return { label: `${passed}/${total} self-tests pass`, tone: anyFail ? 'bad' : 'busy', passed, total };
}

/** The host banner (RT-3): host, version, uptime, engine (`not reported` when absent). No listener field. */
export function bannerView(blob: RuntimeBlob): BannerView {
  return {
    host: orDash(blob.host),
    version: orDash(blob.version),
    uptime: formatDurationMs(blob.uptime),
    engine: blob.engine && blob.engine.trim() ? blob.engine : NOT_REPORTED,
    nominal: nominalPill(blob.selfTests),
  };
}

export interface MeterRow {
  key: string;
  label: string;
  meter: Meter;
}

export interface GaugeCardView {
  title: string;
  /** Device or model name, `—` when absent. */
  name: string;
  /** Tags beside the name (`CUDA` only when a GPU device is named). */
  tags: string[];
  /** A second line under the name (core count), or null. */
  detail: string | null;
  donut: Donut;
  rows: MeterRow[];
}

/** Fixed scale of the temperature bar, °C. */
export const TEMPERATURE_SCALE_C = 100;

/** Display floors of the rows with no natural maximum (RT-4): the bar's full scale is max(value, floor). */
export const DISPLAY_FLOOR = {
  loadavg: 4,
  tensorParallel: 8,
  maxContextTokens: 32_768,
  mappedModels: 4,
  pageCacheBytes: 16 * 1024 ** 3,
  swapBytes: 4 * 1024 ** 3,
} as const;

const pairLabel = (a: string, b: string) => (a === DASH && b === DASH ? DASH : `${a} / ${b}`);

/** GPU card (RT-4): name, utilisation donut, VRAM used/total, temperature, power/cap; `CUDA` only with a named device. */
export function gpuCardView(gpu: GpuStats | undefined): GaugeCardView {
  const g = gpu ?? {};
  const named = typeof g.name === 'string' && g.name.trim() !== '';
  const watts = (w: number | undefined) => (w === undefined ? DASH : `${formatNumber(w, 0)} W`);
  return {
    title: 'GPU',
    name: named ? g.name! : DASH,
    tags: named ? ['CUDA'] : [],
    detail: null,
    donut: percentDonut(g.utilization, 'utilisation'),
    rows: [
      {
        key: 'vram',
        label: 'VRAM',
        meter: capacityMeter(g.vramUsed, g.vramTotal, pairLabel(formatBytes(g.vramUsed), formatBytes(g.vramTotal))),
      },
      {
        key: 'temperature',
        label: 'Temperature',
        meter: capacityMeter(
          g.temperature,
          TEMPERATURE_SCALE_C,
          g.temperature === undefined ? DASH : `${formatNumber(g.temperature, 0)} °C`,
        ),
      },
      {
        key: 'power',
        label: 'Power',
        meter: capacityMeter(g.power, g.powerCap, pairLabel(watts(g.power), watts(g.powerCap))),
      },
    ],
  };
}

/** CPU card (RT-4): model, cores, load donut, 1-min loadavg, tensor-parallel width, max context in thousands. */
export function cpuCardView(cpu: CpuStats | undefined): GaugeCardView {
  const c = cpu ?? {};
  return {
    title: 'CPU',
    name: orDash(c.model),
    tags: [],
    detail: c.cores === undefined ? `${DASH} cores` : `${c.cores} ${c.cores === 1 ? 'core' : 'cores'}`,
    donut: percentDonut(c.load, 'load'),
    rows: [
      {
        key: 'loadavg',
        label: 'Loadavg (1 min)',
        meter: relativeMeter(c.loadavg, DISPLAY_FLOOR.loadavg, formatNumber(c.loadavg)),
      },
      {
        key: 'tensor-parallel',
        label: 'Tensor parallel',
        meter: relativeMeter(c.tensorParallel, DISPLAY_FLOOR.tensorParallel, formatNumber(c.tensorParallel, 0)),
      },
      {
        key: 'max-context',
        label: 'Max context',
        meter: relativeMeter(c.maxContext, DISPLAY_FLOOR.maxContextTokens, formatThousands(c.maxContext)),
      },
    ],
  };
}

/** System memory card (RT-4): total, used donut (`0%` + `not reported` without a total), mapped models, page cache, swap. */
export function memoryCardView(memory: MemoryStats | undefined): GaugeCardView {
  const m = memory ?? {};
  return {
    title: 'System memory',
    name: m.total === undefined ? DASH : `${formatBytes(m.total)} total`,
    tags: [],
    detail: null,
    donut: ratioDonut(m.used, m.total, (used, total) => `${formatBytes(used)} of ${formatBytes(total)}`),
    rows: [
      {
        key: 'mapped-models',
        label: 'Models mapped',
        meter: relativeMeter(m.mappedModels, DISPLAY_FLOOR.mappedModels, formatNumber(m.mappedModels, 0)),
      },
      {
        key: 'page-cache',
        label: 'Page cache',
        meter: relativeMeter(m.pageCache, DISPLAY_FLOOR.pageCacheBytes, formatBytes(m.pageCache)),
      },
      { key: 'swap', label: 'Swap', meter: relativeMeter(m.swap, DISPLAY_FLOOR.swapBytes, formatBytes(m.swap)) },
    ],
  };
}

export interface ConfigRow {
  key: keyof ServingConfig;
  label: string;
  value: string;
}

export const NO_SERVING_CONFIG = 'The engine did not report serving config.';

/** Serving config rows (RT-5), in the seed's order: only those the blob carries; none → an empty list. */
export function servingConfigRows(config: ServingConfig | undefined): ConfigRow[] {
  const c = config ?? {};
  const rows: (ConfigRow | null)[] = [
    c.servedModel !== undefined ? { key: 'servedModel', label: 'Served model', value: orDash(c.servedModel) } : null,
    c.tensorParallel !== undefined
      ? { key: 'tensorParallel', label: 'Tensor parallel', value: formatNumber(c.tensorParallel, 0) }
      : null,
    c.gpuMemUtil !== undefined
      ? { key: 'gpuMemUtil', label: 'GPU memory use', value: formatFraction(c.gpuMemUtil) }
      : null,
    c.maxModelLen !== undefined
      ? { key: 'maxModelLen', label: 'Max context', value: formatTokens(c.maxModelLen) }
      : null,
    c.dtype !== undefined ? { key: 'dtype', label: 'Dtype', value: orDash(c.dtype) } : null,
  ];
  return rows.filter((r): r is ConfigRow => r !== null);
}

export interface SelfTestRow {
  index: number;
  name: string;
  detail: string;
  ms: string;
  status: string;
  tone: TestTone;
}

export const NO_SELF_TESTS = 'No self-tests reported.';

/** Self-tests in the order published (RT-6); the console fixes no set. */
export function selfTestRows(tests: readonly SelfTestEntry[] | undefined): SelfTestRow[] {
  return (tests ?? []).map((t, index) => ({
    index,
    name: orDash(t.name),
    detail: orDash(t.detail),
    ms: formatTestMs(t.ms),
    status: orDash(t.status),
    tone: testTone(t.status),
  }));
}

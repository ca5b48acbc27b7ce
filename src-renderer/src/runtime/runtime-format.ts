import { DASH } from '../format';

/**
 * Number display rules of the Runtime screen (RT-2, RT-4), pure. A value the blob did not carry is `undefined`
 * here and shows `—`: never a zero, never a default. Tested in test/unit/renderer-runtime-format.test.ts.
 */

export const NOT_REPORTED = 'not reported';

const present = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

/** Trims a fixed-decimals string: `8.0` → `8`. */
const trimZero = (s: string) => (s.includes('.') ? s.replace(/\.?0+$/, '') : s);

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** Bytes in binary units with one decimal above KiB: `0 B`, `512 B`, `1.5 KiB`, `23.5 GiB`; `—` when absent. */
export function formatBytes(bytes: number | null | undefined): string {
  if (!present(bytes) || bytes < 0) return DASH;
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < BYTE_UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${Math.round(v)} B` : `${v.toFixed(1)} ${BYTE_UNITS[i]}`;
}

/** A duration in milliseconds as `45s`, `12m 3s`, `3h 5m`, `2d 4h`; `—` when absent or negative. */
export function formatDurationMs(ms: number | null | undefined): string {
  if (!present(ms) || ms < 0) return DASH;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** How long a self-test took: `<0.1 ms`, `4.5 ms`, `120 ms`, `2.3 s`; `—` when absent. */
export function formatTestMs(ms: number | null | undefined): string {
  if (!present(ms) || ms < 0) return DASH;
  if (ms >= 1000) return `${trimZero((ms / 1000).toFixed(1))} s`;
  if (ms >= 100) return `${Math.round(ms)} ms`;
  if (ms > 0 && ms < 0.05) return '<0.1 ms';
  return `${trimZero(ms.toFixed(1))} ms`;
}

/** A 0–100 percentage, rounded: `7%`; `—` when absent. */
export function formatPercent(percent: number | null | undefined): string {
  return present(percent) ? `${Math.round(percent)}%` : DASH;
}

/** A 0–1 fraction as a percentage: `0.9` → `90%`; `—` when absent. */
export function formatFraction(fraction: number | null | undefined): string {
  return present(fraction) ? `${Math.round(fraction * 100)}%` : DASH;
}

/** Tokens in thousands, as the CPU card shows max context: `8192` → `8.2k`, `131072` → `131k`; `—` when absent. */
export function formatThousands(tokens: number | null | undefined): string {
  if (!present(tokens) || tokens < 0) return DASH;
  const k = tokens / 1000;
  return `${k >= 100 ? Math.round(k) : trimZero(k.toFixed(1))}k`;
}

/** A plain count or measurement with at most `decimals` decimals: `1.34`, `2`; `—` when absent. */
export function formatNumber(value: number | null | undefined, decimals = 2): string {
  return present(value) ? trimZero(value.toFixed(decimals)) : DASH;
}

/** Whole tokens with separators: `8,192 tokens`; `—` when absent. */
export function formatTokens(tokens: number | null | undefined): string {
  return present(tokens) ? `${Math.round(tokens).toLocaleString('en-US')} tokens` : DASH;
}

export interface Donut {
  /** Fill, 0–100; 0 when the ratio cannot be computed. Never NaN. */
  percent: number;
  /** Centre label: `42%`, `0%` (memory without a total) or `—` (value absent). */
  label: string;
  /** Sub-label under the donut; `not reported` when the value could not be shown. */
  sub: string;
  reported: boolean;
}

const clampPercent = (p: number) => Math.min(100, Math.max(0, p));

/** A donut over a percentage field (GPU utilisation, CPU load): absent → `—` and `not reported` (RT-2). */
export function percentDonut(percent: number | null | undefined, sub: string): Donut {
  if (!present(percent)) return { percent: 0, label: DASH, sub: NOT_REPORTED, reported: false };
  return { percent: clampPercent(percent), label: `${Math.round(clampPercent(percent))}%`, sub, reported: true };
}

/**
 * The memory donut (RT-4): used as a share of total. Without a total (or a used value, or with a zero total) the
 * ratio is undefined: the donut shows `0%` and the sub-label `not reported`, never `NaN%`.
 */
export function ratioDonut(
  used: number | null | undefined,
  total: number | null | undefined,
  sub: (used: number, total: number) => string,
): Donut {
  if (!present(total) || total <= 0 || !present(used) || used < 0)
    return { percent: 0, label: '0%', sub: NOT_REPORTED, reported: false };
  const percent = clampPercent((used / total) * 100);
  return { percent, label: `${Math.round(percent)}%`, sub: sub(used, total), reported: true };
}

export interface Meter {
  /** Fill fraction 0–1 (0 when the value is absent). */
  fill: number;
  /** The right-hand label: the number to read. */
  label: string;
  reported: boolean;
  /** True when the bar's full scale is max(value, floor): it shows movement, not capacity. */
  relative: boolean;
}

const clampFraction = (f: number) => (Number.isFinite(f) ? Math.min(1, Math.max(0, f)) : 0);

/**
 * A bar with a real denominator (VRAM against total, power against cap, temperature against a fixed scale).
 * Without the value the bar is empty and labelled `—`; without the denominator it is empty but the value shows.
 */
export function capacityMeter(value: number | null | undefined, max: number | null | undefined, label: string): Meter {
  if (!present(value)) return { fill: 0, label, reported: false, relative: false };
  const fill = present(max) && max > 0 ? clampFraction(value / max) : 0;
  return { fill, label, reported: true, relative: false };
}

/**
 * A bar for a row with no natural maximum (RT-4: loadavg, tensor-parallel width, max context, models mapped, page
 * cache, swap): full scale is max(value, floor), so the bar shows movement; read the number, not the fill.
 */
export function relativeMeter(value: number | null | undefined, floor: number, label: string): Meter {
  if (!present(value)) return { fill: 0, label, reported: false, relative: true };
  const scale = Math.max(value, floor);
  return { fill: scale > 0 ? clampFraction(value / scale) : 0, label, reported: true, relative: true };
}

import { describe, expect, it } from 'vitest';
import {
  capacityMeter,
  formatBytes,
  formatDurationMs,
  formatFraction,
  formatNumber,
  formatPercent,
  formatTestMs,
  formatThousands,
  formatTokens,
  NOT_REPORTED,
  percentDonut,
  ratioDonut,
  relativeMeter,
} from '../../src-renderer/src/runtime/runtime-format';

// Number display rules of the Runtime screen (RT-2, RT-4): absent is `—`, never a zero; no NaN anywhere.

const GiB = 1024 ** 3;

describe('runtime number formatters (RT-2)', () => {
  it('bytes in binary units; absent or invalid → —, a reported zero stays 0 B', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(23.5 * GiB)).toBe('23.5 GiB');
    expect(formatBytes(undefined)).toBe('—');
    expect(formatBytes(null)).toBe('—');
    expect(formatBytes(Number.NaN)).toBe('—');
    expect(formatBytes(-1)).toBe('—');
  });

  it('uptime in ms as s / m s / h m / d h; absent → —', () => {
    expect(formatDurationMs(0)).toBe('0s');
    expect(formatDurationMs(45_900)).toBe('45s');
    expect(formatDurationMs(12 * 60_000 + 3_000)).toBe('12m 3s');
    expect(formatDurationMs((3 * 60 + 5) * 60_000)).toBe('3h 5m');
    expect(formatDurationMs((2 * 24 + 4) * 3_600_000)).toBe('2d 4h');
    expect(formatDurationMs(undefined)).toBe('—');
    expect(formatDurationMs(-5)).toBe('—');
  });

  it('self-test durations', () => {
    expect(formatTestMs(4.5)).toBe('4.5 ms');
    expect(formatTestMs(2)).toBe('2 ms');
    expect(formatTestMs(0)).toBe('0 ms');
    expect(formatTestMs(0.01)).toBe('<0.1 ms');
    expect(formatTestMs(120.4)).toBe('120 ms');
    expect(formatTestMs(2_345)).toBe('2.3 s');
    expect(formatTestMs(undefined)).toBe('—');
  });

  it('percent, fraction, thousands, plain numbers, tokens', () => {
    expect(formatPercent(6.9)).toBe('7%');
    expect(formatPercent(0)).toBe('0%');
    expect(formatPercent(undefined)).toBe('—');
    expect(formatFraction(0.9)).toBe('90%');
    expect(formatFraction(undefined)).toBe('—');
    expect(formatThousands(8192)).toBe('8.2k');
    expect(formatThousands(4000)).toBe('4k');
    expect(formatThousands(131_072)).toBe('131k');
    expect(formatThousands(undefined)).toBe('—');
    expect(formatNumber(1.337)).toBe('1.34');
    expect(formatNumber(2)).toBe('2');
    expect(formatNumber(0)).toBe('0');
    expect(formatNumber(undefined)).toBe('—');
    expect(formatTokens(8192)).toBe('8,192 tokens');
    expect(formatTokens(undefined)).toBe('—');
  });
});

describe('donuts (RT-4)', () => {
  it('a percentage field: its value, clamped; absent → — and not reported, empty ring', () => {
    expect(percentDonut(42.4, 'load')).toEqual({ percent: 42.4, label: '42%', sub: 'load', reported: true });
    expect(percentDonut(0, 'load')).toMatchObject({ label: '0%', reported: true });
    expect(percentDonut(130, 'load')).toMatchObject({ percent: 100, label: '100%' });
    expect(percentDonut(undefined, 'utilisation')).toEqual({
      percent: 0,
      label: '—',
      sub: NOT_REPORTED,
      reported: false,
    });
  });

  it('the memory donut needs a total: none → 0% and `not reported`, never NaN%', () => {
    const sub = (u: number, t: number) => `${u} of ${t}`;
    expect(ratioDonut(5, undefined, sub)).toEqual({ percent: 0, label: '0%', sub: 'not reported', reported: false });
    expect(ratioDonut(5, 0, sub)).toEqual({ percent: 0, label: '0%', sub: 'not reported', reported: false });
    expect(ratioDonut(undefined, 100, sub)).toEqual({ percent: 0, label: '0%', sub: 'not reported', reported: false });
    expect(ratioDonut(Number.NaN, 100, sub).label).toBe('0%');
    expect(ratioDonut(25, 100, sub)).toEqual({ percent: 25, label: '25%', sub: '25 of 100', reported: true });
    for (const [u, t] of [
      [0, 0],
      [1, 0],
      [undefined, undefined],
      [Number.NaN, Number.NaN],
      [1, Number.POSITIVE_INFINITY],
    ] as const) {
      const d = ratioDonut(u, t, sub);
      expect(d.label).not.toContain('NaN');
      expect(Number.isNaN(d.percent)).toBe(false);
    }
  });
});

describe('meters (RT-4)', () => {
  it('a real denominator gives a meaningful fill; without it the bar is empty; absent value → not reported', () => {
    expect(capacityMeter(12, 24, '12 / 24')).toEqual({ fill: 0.5, label: '12 / 24', reported: true, relative: false });
    expect(capacityMeter(30, 24, 'x').fill).toBe(1);
    expect(capacityMeter(12, undefined, '12 / —')).toMatchObject({ fill: 0, reported: true });
    expect(capacityMeter(12, 0, 'x').fill).toBe(0);
    expect(capacityMeter(undefined, 24, '—')).toEqual({ fill: 0, label: '—', reported: false, relative: false });
  });

  it('rows without a natural maximum scale to max(value, display floor)', () => {
    expect(relativeMeter(1, 4, '1')).toEqual({ fill: 0.25, label: '1', reported: true, relative: true });
    // Above the floor the value is its own full scale: the bar is full, the number is what to read.
    expect(relativeMeter(10, 4, '10')).toMatchObject({ fill: 1, relative: true });
    expect(relativeMeter(0, 4, '0')).toMatchObject({ fill: 0, reported: true });
    expect(relativeMeter(0, 0, '0').fill).toBe(0);
    expect(relativeMeter(undefined, 4, '—')).toEqual({ fill: 0, label: '—', reported: false, relative: true });
  });
});

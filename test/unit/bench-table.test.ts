import { describe, expect, it } from 'vitest';
import { selectBenchmarks, tableRows } from '../../src-router/bench/runner';
import {
  cellText,
  DASH,
  formatDuration,
  formatNumber,
  formatRatio,
  median,
  percentile,
  ratio,
  renderTable,
  width,
} from '../../src-router/bench/table';

describe('ratio formatting', () => {
  it('prints two decimals below 10, one below 100, none above, with ×', () => {
    expect(formatRatio(1)).toBe('1.00×');
    expect(formatRatio(0.4249)).toBe('0.42×');
    expect(formatRatio(3.256)).toBe('3.26×');
    expect(formatRatio(12.34)).toBe('12.3×');
    expect(formatRatio(250.4)).toBe('250×');
  });

  it('prints the dash for a ratio that cannot be computed, never NaN or Infinity', () => {
    expect(formatRatio(null)).toBe(DASH);
    expect(formatRatio(undefined)).toBe(DASH);
    expect(formatRatio(Number.NaN)).toBe(DASH);
    expect(formatRatio(Number.POSITIVE_INFINITY)).toBe(DASH);
    expect(formatRatio(ratio(5, 0))).toBe(DASH);
    expect(formatRatio(ratio(null, 2))).toBe(DASH);
  });

  it('divides by the baseline', () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(0, 2)).toBe(0);
    expect(ratio(2, 0)).toBeNull();
    expect(ratio(2, Number.NaN)).toBeNull();
  });
});

describe('number formatting', () => {
  it('groups thousands and drops decimals as numbers grow', () => {
    expect(formatNumber(0.4333, 3)).toBe('0.433');
    expect(formatNumber(12.345)).toBe('12.35');
    expect(formatNumber(123.45)).toBe('123.5');
    expect(formatNumber(12_345.6)).toBe('12,346');
    expect(formatNumber(1_234_567)).toBe('1,234,567');
    expect(formatNumber(-1500)).toBe('-1,500');
  });

  it('prints integers in cells without decimals and absent values as the dash', () => {
    expect(cellText(200)).toBe('200');
    expect(cellText(80)).toBe('80');
    expect(cellText(100_000)).toBe('100,000');
    expect(cellText(1.5)).toBe('1.50');
    expect(cellText(null)).toBe(DASH);
    expect(cellText('')).toBe(DASH);
    expect(formatNumber(Number.NaN)).toBe(DASH);
  });

  it('formats durations for prose', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(1250)).toBe('1.25 s');
    expect(formatDuration(120_000)).toBe('2.0 min');
  });
});

describe('percentiles', () => {
  it('uses the nearest rank on unsorted samples', () => {
    const s = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
    expect(percentile(s, 50)).toBe(5);
    expect(percentile(s, 95)).toBe(10);
    expect(percentile(s, 0)).toBe(1);
    expect(median([3, 1, 2])).toBe(2);
    expect(percentile([], 50)).toBeNull();
  });
});

describe('table rendering', () => {
  const text = renderTable({
    title: 'demo: units in headers',
    columns: ['path', 'p50 ms', { header: 'note', align: 'left' }, 'ratio'],
    rows: [
      ['direct', '0.433', 'base', formatRatio(1)],
      ['router → sim model', '1.409', null, formatRatio(3.254)],
      ['short'],
    ],
    notes: ['ratios against direct'],
  });
  const lines = text.trimEnd().split('\n');

  it('prints the title, the header, a rule, one line per row, then the notes', () => {
    expect(lines[0]).toBe('demo: units in headers');
    expect(lines[1]).toMatch(/^path\s+p50 ms {2}note {2}ratio$/);
    expect(lines[2]).toMatch(/^─+( {2}─+){3}$/);
    expect(lines).toHaveLength(7);
    expect(lines[6]).toBe('  ratios against direct');
    expect(text.endsWith('\n')).toBe(true);
  });

  it('pads every column to its widest cell: first left, numbers right, by code points', () => {
    // The last column is right-aligned: every line ends where the rule ends; ×, → and — count as one column.
    const end = width(lines[2]);
    for (const l of lines.slice(1, 6)) expect(width(l)).toBe(end);
    expect(lines[3].endsWith('1.00×')).toBe(true);
    expect(lines[4].endsWith('3.25×')).toBe(true);
    expect(lines[4].startsWith('router → sim model  ')).toBe(true);
    expect(lines[3]).toContain('direct              ');
    // The left-aligned note column and missing cells: the dash, filled for short rows, no trailing spaces.
    expect(lines[4]).toContain(`1.409  ${DASH}   `);
    expect(lines[5]).toMatch(new RegExp(`^short\\s+${DASH}  ${DASH}\\s+${DASH}$`));
    for (const l of lines) expect(l).toBe(l.trimEnd());
  });
});

describe('benchmark selection', () => {
  it('runs all by default, the named ones (flag repeated or comma-separated) in table order, refuses unknown names', () => {
    expect(selectBenchmarks(undefined).map((b) => b.name)).toEqual([
      'proxy-overhead',
      'lending-makespan',
      'lending-scenarios',
      'faults',
      'planner-scale',
      'decision-log',
      'lending-log',
      'timeline-layout',
      'replay-load',
    ]);
    expect(selectBenchmarks(['decision-log,planner-scale']).map((b) => b.name)).toEqual([
      'planner-scale',
      'decision-log',
    ]);
    expect(selectBenchmarks(['planner-scale', 'proxy-overhead']).map((b) => b.name)).toEqual([
      'proxy-overhead',
      'planner-scale',
    ]);
    expect(() => selectBenchmarks(['nope'])).toThrow(/unknown benchmark nope/);
  });
});

describe('--json rows of a benchmark without rows of its own', () => {
  it('one object per table row: first column as the scenario, numbers as numbers, the dash as null', () => {
    const rows = tableRows('planner-scale', [
      {
        title: 't',
        columns: ['nodes', 'µs per decision', { header: 'ratio' }, 'note'],
        rows: [
          ['2 nodes', '1,234.5', '1.50×', '—'],
          ['10 nodes', 7, null, 'ok'],
        ],
      },
    ]);
    expect(rows).toEqual([
      {
        benchmark: 'planner-scale',
        scenario: '2 nodes',
        table: 't',
        'µs per decision': 1234.5,
        ratio: 1.5,
        note: null,
      },
      { benchmark: 'planner-scale', scenario: '10 nodes', table: 't', 'µs per decision': 7, ratio: null, note: 'ok' },
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { benchRunViews, ratioChange } from '../../src-renderer/src/runtime/bench-view';
import type { BenchRunWire } from '../../src-router/contract';

// ASSET-1: kept benchmark runs, newest first; each summary ratio beside the previous run of the same kind.
const machine = {
  hostname: 'box',
  platform: 'linux',
  arch: 'x64',
  node: 'v22.0.0',
  cores: 2,
  cpu: 'Xeon',
  memoryBytes: 8 * 1024 ** 3,
};
const run = (
  id: string,
  startedAt: string,
  quick: boolean,
  ratio: number | null,
  over: Partial<BenchRunWire> = {},
): BenchRunWire => ({
  id,
  startedAt,
  finishedAt: startedAt,
  version: '0.3.0',
  quick,
  benchmarks: ['planner-scale'],
  failed: [],
  machine,
  rowCount: 4,
  summary: [
    {
      benchmark: 'planner-scale',
      measure: 'µs per decision',
      value: '1,000',
      ratio,
      against: 'µs per link at 2 nodes',
    },
  ],
  ...over,
});

describe('benchmark runs (ASSET-1)', () => {
  it('each line beside the previous run of the same kind: a regression shows as a change of ratio', () => {
    const views = benchRunViews([
      run('c', '2025-01-03T10:00:00.000Z', true, 1.5),
      run('b', '2025-01-02T10:00:00.000Z', false, 9),
      run('a', '2025-01-01T10:00:00.000Z', true, 1.2, { failed: ['faults'], benchmarks: ['planner-scale', 'faults'] }),
    ]);
    expect(views.map((v) => [v.id, v.kind, v.lines[0].ratio, v.lines[0].previous, v.lines[0].change])).toEqual([
      ['c', 'quick', '1.50×', '1.20×', '+25%'],
      ['b', 'full', '9.00×', '—', '—'],
      ['a', 'quick', '1.20×', '—', '—'],
    ]);
    expect(views[2]).toMatchObject({ failed: '1 failed: faults', benchmarks: 'planner-scale, faults', rows: '4' });
    expect(views[0].machine).toBe('box · 2 cores · Xeon · 8.0 GiB · node v22.0.0');
    expect(views[0].startedTitle).toBe('2025-01-03T10:00:00.000Z');
  });

  it('an unknown ratio is —, never NaN; changes are signed', () => {
    const [v] = benchRunViews([run('x', 'later', true, null), run('y', '2025-01-01T00:00:00.000Z', true, 2)]);
    expect(v).toMatchObject({ started: '—', lines: [{ ratio: '—', previous: '2.00×', change: '—' }] });
    expect([ratioChange(0.9, 1), ratioChange(1, 1), ratioChange(1, 0), ratioChange(1, undefined)]).toEqual([
      '−10%',
      '0%',
      '—',
      '—',
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { timelineEvents } from '../../src-renderer/src/lending/timeline-events';
import { CLUSTER_QUARTER, syntheticTimeline, timelineLayoutBench } from '../../src-router/bench/timeline-layout';
import { decisionRowSchema, timelinePageSchema } from '../../src-router/contract';

// The timeline-layout benchmark's input: the same rows every run, wire-shaped, exactly the events asked for.
describe('timeline-layout benchmark input', () => {
  it('is deterministic, parses with the contract and makes exactly the events asked for, of every kind', () => {
    const a = syntheticTimeline(2_000);
    expect(syntheticTimeline(2_000)).toEqual(a);
    timelinePageSchema.parse(a.page);
    for (const d of a.decisions) decisionRowSchema.parse(d);
    const events = timelineEvents(a.page, a.decisions);
    expect(events).toHaveLength(2_000);
    expect(new Set(events.map((e) => e.kind))).toEqual(
      new Set(['own', 'borrowed', 'load', 'restore', 'lease', 'probe', 'grant', 'hold', 'lent', 'returned', 'cutoff']),
    );
  });

  it('the cluster case: 10 nodes, each with a text and an image row, over 15 minutes, every pair lending', () => {
    const a = syntheticTimeline(3_000, 1, 1_700_000_000_000, CLUSTER_QUARTER);
    expect(syntheticTimeline(3_000, 1, 1_700_000_000_000, CLUSTER_QUARTER)).toEqual(a);
    timelinePageSchema.parse(a.page);
    const events = timelineEvents(a.page, a.decisions);
    expect(events).toHaveLength(3_000);
    expect(new Set(events.map((e) => `${e.node}/${e.lane}`)).size).toBe(20);
    expect(new Set(a.decisions.map((d) => d.ownerNode))).toEqual(
      new Set(['gpu-01', 'gpu-03', 'gpu-05', 'gpu-07', 'gpu-09']),
    );
  });

  it('reports one table row per measure and a summary against the 200 ms target', async () => {
    const r = await timelineLayoutBench.run({ quick: true, log: () => {} });
    expect(r.tables[0].rows.map((row) => row[0])).toEqual([
      'whole hour (events + layout)',
      'zoomed to 1 min (events + layout)',
      'layout only (a pan or zoom step)',
      'hit test (one pointer move)',
      'cluster 10 × 2 lanes, 15 min (events + layout)',
      'cluster: layout only (a pan or zoom step)',
    ]);
    expect(r.tables[0].rows.map((row) => row[1])).toEqual([10_000, 10_000, 10_000, 10_000, 12_000, 12_000]);
    expect(r.summary.map((l) => l.against)).toEqual(['the 200 ms target', 'the 200 ms target']);
    expect(r.summary[0]).toMatchObject({ benchmark: 'timeline-layout', against: 'the 200 ms target' });
  });
});

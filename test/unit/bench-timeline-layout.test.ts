import { describe, expect, it } from 'vitest';
import { timelinePageSchema, decisionRowSchema } from '../../src-router/contract';
import { syntheticTimeline, timelineLayoutBench } from '../../src-router/bench/timeline-layout';
import { timelineEvents } from '../../src-renderer/src/lending/timeline-events';

// The timeline-layout benchmark's input: the same rows every run, wire-shaped, exactly the events asked for.
describe('timeline-layout benchmark input', () => {
  it('is deterministic, parses with the contract and makes exactly the events asked for, of every kind', () => {
    const a = syntheticTimeline(2_000);
    expect(syntheticTimeline(2_000)).toEqual(a);
    timelinePageSchema.parse(a.page);
    for (const d of a.decisions) decisionRowSchema.parse(d);
    const events = timelineEvents(a.page, a.decisions);
    expect(events).toHaveLength(2_000);
    expect(new Set(events.map((e) => e.kind))).toEqual(new Set(['own', 'borrowed', 'load', 'restore', 'lease', 'probe', 'grant', 'hold', 'lent', 'returned', 'cutoff']));
  });

  it('reports one table row per measure and a summary against the 200 ms target', async () => {
    const r = await timelineLayoutBench.run({ quick: true, log: () => {} });
    expect(r.tables[0].rows.map((row) => row[0])).toEqual(['whole hour (events + layout)', 'zoomed to 1 min (events + layout)', 'layout only (a pan or zoom step)', 'hit test (one pointer move)']);
    expect(r.tables[0].rows.every((row) => row[1] === 10_000)).toBe(true);
    expect(r.summary[0]).toMatchObject({ benchmark: 'timeline-layout', against: 'the 200 ms target' });
  });
});

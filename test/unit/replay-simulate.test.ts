import { describe, expect, it } from 'vitest';
import { type ReplayInput, type ReplayRequest, simulate } from '../../src-router/lending/replay';
import type { RequestRow } from '../../src-router/store';

const settings = {
  depth: 2,
  refreshIntervalMs: 400,
  minSamples: 3,
  sampleWindowMs: 86_400_000,
  contextReserve: 512,
  probeIdleMs: 300,
  holdEnabled: true,
  decisionLatencyMs: 15,
  relayMs: 5,
};
const T0 = 1_000_000;

const history = (node: string, model: string, ms: number): RequestRow[] =>
  Array.from({ length: 4 }, (_, i) => ({
    finishedAt: T0 - 10_000 + i * 1000,
    nodeId: node,
    model,
    localId: model,
    backend: 'sim',
    endpoint: 'chat',
    streamed: false,
    promptBytes: 100,
    promptTokens: 5,
    tokensGenerated: 12,
    queueWaitMs: 0,
    durationMs: ms,
    serviceMs: ms,
    serviceSource: 'derived',
    outcome: 'ok',
  }));

function burst(n: number): ReplayRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `r${String(i).padStart(2, '0')}`,
    node: 'owner',
    model: 'a',
    endpoint: 'chat',
    arrivedAt: T0 + i,
    work: 12,
    stream: false,
    bodyBytes: 100,
    promptTokens: 5,
    serviceMs: { 'owner/a': 360 },
    recorded: { finishedAt: T0 + 1000, waitMs: 0, ranOn: 'owner/a' },
  }));
}

const input = (o: Partial<ReplayInput> = {}): ReplayInput => ({
  from: T0,
  to: T0 + 60_000,
  requests: burst(12),
  history: [...history('owner', 'a', 360), ...history('helper', 'b', 180)],
  historyLoads: [],
  models: [
    { nodeId: 'owner', model: 'a', lane: 'text', runtimeLane: 'text', loadSamplesMs: [400] },
    { nodeId: 'helper', model: 'b', lane: 'text', runtimeLane: 'text', loadSamplesMs: [400] },
  ],
  lanesAtStart: { owner: { text: 'a' }, helper: { text: 'b' } },
  links: [
    {
      id: 'L1',
      lane: 'text',
      owner: { nodeId: 'owner', model: 'a' },
      helper: { nodeId: 'helper', model: 'b' },
      loadIfUnloaded: true,
      restoreAfterBorrow: false,
    },
  ],
  settings,
  ...o,
});

const makespan = (r: ReturnType<typeof simulate>) => Math.max(...r.requests.map((x) => x.finishedAt)) - T0;

describe('replay core (simulate)', () => {
  it('without links every request runs on its owner, one at a time at its measured service time', () => {
    const r = simulate(input({ links: [] }), 100_000);
    expect(r.requests).toHaveLength(12);
    expect(r.requests.every((x) => x.ranOn === 'owner/a')).toBe(true);
    expect(makespan(r)).toBe(12 * 360);
    expect(r.decisions).toHaveLength(0);
    expect(r.loads).toBe(0);
  });

  it('lends held requests to a faster helper through the planner and the owner side (lent rows, plan rows)', () => {
    const r = simulate(input(), 100_000);
    expect(r.requests).toHaveLength(12);
    const lent = r.decisions.filter((d) => d.event === 'lent').length;
    expect(lent).toBeGreaterThan(4);
    expect(r.decisions.some((d) => d.kind === 'plan' && d.event === 'granted')).toBe(true);
    expect(r.requests.filter((x) => x.ranOn === 'helper/b')).toHaveLength(lent);
    expect(makespan(r)).toBeLessThan(12 * 360 * 0.6);
    expect(r.capped).toBe(false);
  });

  it('is deterministic: the same snapshot gives the same events', () => {
    expect(simulate(input(), 100_000)).toEqual(simulate(input(), 100_000));
  });

  it('a helper with no fit and a probe idle longer than the burst lends nothing', () => {
    const r = simulate(input({ settings: { ...settings, minSamples: 50, probeIdleMs: 3_600_000 } }), 100_000);
    expect(r.decisions.filter((d) => d.event === 'lent')).toHaveLength(0);
    expect(makespan(r)).toBe(12 * 360);
  });

  it('a helper whose lane holds another model pays its load (counted) when it must switch', () => {
    const r = simulate(input({ lanesAtStart: { owner: { text: 'a' }, helper: { text: null } } }), 100_000);
    expect(r.loads).toBeGreaterThanOrEqual(1);
  });

  it('stops at the event cap and says so', () => {
    const r = simulate(input(), 10);
    expect(r.capped).toBe(true);
    expect(r.events).toBe(10);
  });
});

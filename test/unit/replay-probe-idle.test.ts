import { describe, expect, it } from 'vitest';
import { idleAtStart, type ReplayInput, type ReplayRequest, simulate } from '../../src-router/lending/replay';
import type { RequestRow } from '../../src-router/store';

/**
 * The replay's probes follow the live rules (PROBE-1..4, PROBE-3's idleness): a helper is idle since its last own
 * work ended — as the master measured it at the range's first plan rows, else its last own request before the range,
 * else the range's start — never "forever", so `offload_probe_idle` decides when the first lease of a cold burst goes.
 * Simulated clock only: no sleeps, no wall clock.
 */

const T0 = 5_000_000;
const settings = {
  depth: 2,
  refreshIntervalMs: 400,
  minSamples: 2,
  sampleWindowMs: 86_400_000,
  contextReserve: 512,
  probeIdleMs: 300,
  holdEnabled: true,
  decisionLatencyMs: 15,
  relayMs: 5,
};

const row = (o: Partial<RequestRow>): RequestRow => ({
  finishedAt: T0 - 5000,
  nodeId: 'helper',
  model: 'b',
  localId: 'b',
  backend: 'sim',
  endpoint: 'chat',
  streamed: false,
  promptBytes: 100,
  promptTokens: 5,
  tokensGenerated: 8,
  queueWaitMs: 0,
  durationMs: 160,
  serviceMs: 160,
  serviceSource: 'derived',
  outcome: 'ok',
  ...o,
});

/** A burst on the owner's slow `a`; the recorded borrowed jobs measured the helper's `b` at 160 ms. */
function burst(n: number, node = 'owner', model = 'a', at = T0): ReplayRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${node}-${String(i).padStart(2, '0')}`,
    node,
    model,
    endpoint: 'chat',
    arrivedAt: at + i,
    work: 8,
    stream: false,
    bodyBytes: 100,
    promptTokens: 5,
    serviceMs: node === 'owner' ? { 'owner/a': 800, ...(i % 2 ? { 'helper/b': 160 } : {}) } : { 'helper/b': 160 },
    recorded: { finishedAt: at + 5000, waitMs: 0, ranOn: `${node}/${model}` },
  }));
}

/** Cold: nothing measured, nothing loaded, the link in place: the burst's first lease can only be a probe. */
const cold = (o: Partial<ReplayInput> = {}): ReplayInput => ({
  from: T0,
  to: T0 + 60_000,
  requests: burst(10),
  history: [],
  historyLoads: [],
  models: [
    { nodeId: 'owner', model: 'a', lane: 'text', runtimeLane: 'text', loadSamplesMs: [50] },
    { nodeId: 'helper', model: 'b', lane: 'text', runtimeLane: 'text', loadSamplesMs: [50] },
  ],
  lanesAtStart: {},
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
const firstAt = (r: ReturnType<typeof simulate>, pred: (d: (typeof r.decisions)[number]) => boolean) =>
  r.decisions.find(pred)?.at ?? null;

describe('replay idleness at the start (idleAtStart)', () => {
  const requests = burst(3);
  it("takes the master's measurement from the earliest plan row before the node's own first arrival", () => {
    const samples = [
      { nodeId: 'helper', at: T0 + 10, idleMs: 2500 },
      { nodeId: 'helper', at: T0 + 900, idleMs: 3390 },
      { nodeId: 'other', at: T0, idleMs: 99 },
    ];
    expect(idleAtStart('helper', { from: T0, history: [row({ finishedAt: T0 - 9000 })], requests, samples })).toEqual({
      idleSince: T0 - 2490,
      lastOwnRequestEnd: T0 - 9000,
    });
    // A sample taken while it was busy says nothing about the start; one after its own first arrival neither.
    expect(
      idleAtStart('helper', {
        from: T0,
        history: [],
        requests: burst(2, 'helper', 'b', T0 + 100),
        samples: [
          { nodeId: 'helper', at: T0, idleMs: 0 },
          { nodeId: 'helper', at: T0 + 200, idleMs: 50 },
        ],
      }).idleSince,
    ).toBe(T0);
  });

  it("else the end of its last own request before the range: a borrowed job ends its owner's request, not the helper's", () => {
    const history = [
      row({ finishedAt: T0 - 4000 }),
      row({ finishedAt: T0 - 1000, lentFrom: 'owner/a' }),
      row({ nodeId: 'owner', localId: 'a', finishedAt: T0 - 3000 }),
    ];
    expect(idleAtStart('helper', { from: T0, history, requests })).toEqual({
      idleSince: T0 - 4000,
      lastOwnRequestEnd: T0 - 4000,
    });
    expect(idleAtStart('owner', { from: T0, history, requests })).toEqual({
      idleSince: T0 - 1000,
      lastOwnRequestEnd: T0 - 1000,
    });
  });

  it("else the range's start, never idle forever", () => {
    expect(idleAtStart('helper', { from: T0, history: [], requests })).toEqual({
      idleSince: T0,
      lastOwnRequestEnd: null,
    });
  });
});

describe('replay probes (simulate)', () => {
  // The master measured the helper idle for 1 s when the burst began.
  const measured = [{ nodeId: 'helper', at: T0 + 20, idleMs: 1020 }];

  it("the cold burst's first lease is a probe that waits for 12 × offload_probe_idle of the helper's idleness (it must load)", () => {
    const r = simulate(cold({ idleSamples: measured }), 100_000);
    const due = T0 - 1000 + 12 * 300;
    const probe = firstAt(r, (d) => d.kind === 'plan' && d.event === 'probe');
    expect(probe).not.toBeNull();
    expect(probe!).toBeGreaterThanOrEqual(due);
    expect(probe!).toBeLessThan(due + 100);
    // Before it, nobody was priced: no lease of any kind, and the skipped rows named when the probe would be due.
    expect(r.decisions.filter((d) => d.at < probe! && d.kind === 'plan' && d.event !== 'skipped')).toEqual([]);
    expect(r.decisions.some((d) => d.kind === 'plan' && d.at < probe! && d.details?.probeDueAt === due)).toBe(true);
    const firstLent = r.decisions.find((d) => d.event === 'lent')!;
    expect(firstLent.at).toBeGreaterThanOrEqual(probe!);
    expect(firstLent.slots).toBe(1);
    // The probe's load and sample price the helper: granted leases follow.
    expect(r.decisions.some((d) => d.kind === 'plan' && d.event === 'granted' && d.at > probe!)).toBe(true);
    expect(r.decisions.filter((d) => d.event === 'lent').length).toBeGreaterThan(1);
  });

  it('with offload_probe_idle 1h the probe is never offered in the window: nothing is lent, the owner drains alone', () => {
    const r = simulate(cold({ idleSamples: measured, settings: { ...settings, probeIdleMs: 3_600_000 } }), 100_000);
    expect(r.decisions.filter((d) => d.kind === 'plan' && d.event === 'probe')).toEqual([]);
    expect(r.decisions.filter((d) => d.event === 'lent')).toEqual([]);
    expect(makespan(r)).toBe(50 + 10 * 800);
    expect(makespan(r)).toBeGreaterThan(makespan(simulate(cold({ idleSamples: measured }), 100_000)));
  });

  it('a shorter probe idle lends earlier: the setting alone moves the numbers', () => {
    const at = (probeIdleMs: number) =>
      firstAt(
        simulate(cold({ idleSamples: measured, settings: { ...settings, probeIdleMs } }), 100_000),
        (d) => d.event === 'lent',
      );
    expect(at(0)).toBeLessThan(at(100)!);
    expect(at(100)).toBeLessThan(at(300)!);
  });

  it('a helper with nothing recorded before the range is idle from its start, not forever', () => {
    const r = simulate(cold(), 100_000);
    expect(firstAt(r, (d) => d.kind === 'plan' && d.event === 'probe')).toBeGreaterThanOrEqual(T0 + 12 * 300);
    expect(
      simulate(cold({ settings: { ...settings, probeIdleMs: 3_600_000 } }), 100_000).decisions.filter(
        (d) => d.event === 'lent',
      ),
    ).toEqual([]);
  });

  it("an owner's lent requests end its own work: idle again after its answers, it is probed as a helper later", () => {
    const links = [
      ...cold().links,
      {
        id: 'L2',
        lane: 'text' as const,
        owner: { nodeId: 'helper', model: 'b' },
        helper: { nodeId: 'owner', model: 'a' },
        loadIfUnloaded: true,
        restoreAfterBorrow: false,
      },
    ];
    const later = T0 + 40_000;
    const r = simulate(
      cold({
        idleSamples: measured,
        links,
        requests: [...burst(10), ...burst(6, 'helper', 'b', later)],
        settings: { ...settings, probeIdleMs: 100 },
      }),
      100_000,
    );
    expect(r.decisions.some((d) => d.event === 'lent' && d.ownerNode === 'owner')).toBe(true);
    const ownerEnd = Math.max(...r.requests.filter((x) => x.id.startsWith('owner-')).map((x) => x.finishedAt));
    const asHelper = r.decisions.filter((d) => d.kind === 'plan' && d.helperNode === 'owner' && d.at >= later);
    expect(asHelper.length).toBeGreaterThan(0);
    expect(asHelper[0].helperIdleMs).toBe(asHelper[0].at - ownerEnd);
  });
});

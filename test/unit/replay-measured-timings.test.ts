import { describe, expect, it } from 'vitest';
import { replay } from '../../src-router/lending/replay';
import { measuredTimings } from '../../src-router/lending/replay/measured-timings';
import type { DecisionRow, ReplaySource, RequestRow } from '../../src-router/store';

/**
 * A replay runs with the decision latency and relay hop its record had (issue #14's replay flake: a record made on a
 * loaded machine had ~3× the loopback constants, and its replay finished early): the owners' `decisionMs` on leases
 * answered to an event, and half of each lent request's round trip beyond the helper's job. Pure: no clock.
 */
const T0 = 7_000_000;
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

const row = (o: Partial<RequestRow>): RequestRow => ({
  finishedAt: T0,
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
  durationMs: 100,
  serviceMs: null,
  serviceSource: null,
  outcome: 'ok',
  ...o,
});
const decision = (o: Partial<DecisionRow>): DecisionRow =>
  ({
    id: 1,
    at: T0,
    nodeId: 'owner',
    routerVersion: 't',
    kind: 'dispatch',
    event: 'lent',
    trigger: null,
    linkId: 'l1',
    ownerNode: 'owner',
    ownerModel: 'a',
    helperNode: 'helper',
    helperModel: 'b',
    details: null,
    ...o,
  }) as DecisionRow;

/**
 * Lent requests arriving at the owner every 10 ms, dispatched `lentAfter` later, `relay` each way, 200–260 ms at the
 * helper (the later the longer: finishing times alone would pair them wrongly; the request IDs pair them).
 */
function sources(o: { lentAfter: number; relay: number; decisionMs?: number[] }): ReplaySource[] {
  const owner: RequestRow[] = [];
  const helper: RequestRow[] = [];
  const decisions: DecisionRow[] = (o.decisionMs ?? []).map((ms, i) =>
    decision({ id: 100 + i, at: T0 + i, event: 'lease_updated', details: { measured: true, decisionMs: ms } }),
  );
  for (let i = 0; i < 5; i++) {
    const arrived = T0 + 10 * i;
    const lentAt = arrived + o.lentAfter;
    const job = 200 + 15 * i;
    const helperEnd = lentAt + o.relay + job;
    owner.push(row({ finishedAt: helperEnd + o.relay, durationMs: helperEnd + o.relay - arrived, requestId: `r${i}` }));
    helper.push(
      row({
        finishedAt: helperEnd,
        durationMs: job,
        serviceMs: job,
        serviceSource: 'derived',
        requestId: `r${i}`,
        lentFrom: 'owner/a',
      }),
    );
    decisions.unshift(decision({ id: i + 1, at: lentAt, requestId: `r${i}` }));
  }
  const link = {
    id: 'l1',
    lane: 'text' as const,
    ownerNode: 'owner',
    ownerModel: 'a',
    helperNode: 'helper',
    helperModel: 'b',
    loadIfUnloaded: false,
    restoreAfterBorrow: false,
  };
  return [
    {
      nodeId: 'owner',
      requests: owner,
      history: [],
      loads: [],
      decisions,
      links: [link],
      truncated: false,
    } as unknown as ReplaySource,
    {
      nodeId: 'helper',
      requests: helper,
      history: [],
      loads: [],
      decisions: [],
      links: [],
      truncated: false,
    } as unknown as ReplaySource,
  ];
}
const trips = (s: ReplaySource[]) =>
  s[0].requests.map((r, i) => ({
    ownerRow: r,
    lent: s[0].decisions.find((d) => d.event === 'lent' && d.requestId === r.requestId)!,
    helperJob: s[1].requests[i],
  }));

describe('the timings a replay takes from its record', () => {
  it("the median decision latency of leases answered to an event, and half the round trip beyond the helper's job", () => {
    const s = sources({ lentAfter: 5, relay: 30, decisionMs: [40, 55, 20] });
    expect(measuredTimings(s[0].decisions, trips(s))).toEqual({ decisionLatencyMs: 40, relayMs: 30 });
    // The owner's wait before the dispatch is not the relay's.
    expect(measuredTimings([], trips(sources({ lentAfter: 90, relay: 12 }))).relayMs).toBe(12);
  });

  it('neither without its rows: a lease pushed on a tick has no decisionMs', () => {
    expect(measuredTimings([decision({ event: 'lease_updated', details: { measured: true } })], [])).toEqual({
      decisionLatencyMs: null,
      relayMs: null,
    });
  });

  it("the replay runs with the record's timings, and shows them; without them, the loopback values", () => {
    const measured = replay(sources({ lentAfter: 5, relay: 25, decisionMs: [45] }), {
      from: T0,
      to: T0 + 1000,
      settings,
      maxEvents: 100_000,
    });
    expect(measured.recorded.requests).toBe(5);
    expect(measured.settings).toMatchObject({ decision_latency_ms: 45, relay_ms: 25 });
    // Each lent request was matched with its own helper job (by request ID): its service time is that job's.
    expect(measured.recorded.requests).toBe(5);
    const fast = replay(sources({ lentAfter: 5, relay: 2 }), { from: T0, to: T0 + 1000, settings, maxEvents: 100_000 });
    expect(fast.settings).toMatchObject({ decision_latency_ms: 15, relay_ms: 2 });
    const none = replay([sources({ lentAfter: 5, relay: 2 })[1]], {
      from: T0,
      to: T0 + 1000,
      settings,
      maxEvents: 100_000,
    });
    expect(none.settings).toMatchObject({ decision_latency_ms: 15, relay_ms: 5 });
  });

  it("a job replayed where it ran holds its lane as long beyond the engine's report as it did, not its model's mean", () => {
    // Two jobs the engine timed at 100 ms each: the first held the lane 300 ms (a busy moment), the second 100 ms.
    const own = [0, 1000].map((at, i) =>
      row({
        nodeId: 'owner',
        localId: 'a',
        model: 'a',
        finishedAt: T0 + at + (i ? 100 : 300),
        durationMs: i ? 100 : 300,
        serviceMs: 100,
        derivedServiceMs: i ? 100 : 300,
        serviceSource: 'engine',
        requestId: `own${i}`,
      }),
    );
    const r = replay(
      [
        {
          nodeId: 'owner',
          requests: own,
          history: [],
          loads: [],
          decisions: [],
          links: [],
          truncated: false,
        } as unknown as ReplaySource,
      ],
      { from: T0, to: T0 + 2000, settings, maxEvents: 10_000 },
    );
    expect([r.recorded.completionP50Ms, r.recorded.completionP95Ms]).toEqual([100, 300]);
    // With the mean (100 ms beyond the report) both would take 200 ms.
    expect([r.replayed.completionP50Ms, r.replayed.completionP95Ms]).toEqual([100, 300]);
  });
});

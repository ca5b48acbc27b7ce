import { describe, expect, it } from 'vitest';
import { TRACE_NODES, traceRow, traceVerdict } from '../../src-router/bench/lending-trace';
import { type TraceNode, traceRequests } from '../../src-router/bench/trace-traffic';

// The lending trace's traffic: seeded and pure, the same requests every run, bursts and lulls on every node.
const opts = { seed: 29, nodes: TRACE_NODES, recordedMs: 600_000, compress: 5 };

describe('trace traffic', () => {
  it('is the same for the same seed and differs for another', () => {
    expect(traceRequests(opts)).toEqual(traceRequests(opts));
    expect(traceRequests({ ...opts, seed: 30 })).not.toEqual(traceRequests(opts));
  });

  it('ten recorded minutes compressed five times: about two minutes, in arrival order', () => {
    const reqs = traceRequests(opts);
    expect(reqs.every((r, i) => i === 0 || reqs[i - 1].atMs <= r.atMs)).toBe(true);
    expect(Math.min(...reqs.map((r) => r.atMs))).toBeGreaterThanOrEqual(0);
    expect(Math.max(...reqs.map((r) => r.atMs))).toBeLessThan(120_000 + 1_000);
  });

  it('every node has its own traffic and its bursts; both text models, the image model and streaming all appear', () => {
    const reqs = traceRequests(opts);
    for (const n of TRACE_NODES) {
      expect(reqs.filter((r) => r.node === n.id && r.kind === 'own').length).toBeGreaterThan(10);
      for (const b of n.bursts)
        expect(
          reqs.filter((r) => r.node === n.id && r.kind === 'burst' && r.model === b.model).length,
        ).toBeGreaterThanOrEqual(b.size);
    }
    expect(new Set(reqs.map((r) => r.model))).toEqual(new Set(['chat-a', 'chat-b', 'paint']));
    expect(reqs.some((r) => r.stream)).toBe(true);
    expect(reqs.some((r) => r.lane === 'image' && r.stream)).toBe(false);
    // A burst arrives within about a second.
    for (const b of new Set(reqs.filter((r) => r.burst !== null).map((r) => r.burst))) {
      const at = reqs.filter((r) => r.burst === b).map((r) => r.atMs);
      expect(Math.max(...at) - Math.min(...at)).toBeLessThan(1_000);
    }
  });

  it('busy stretches and lulls: the own arrivals per recorded minute vary', () => {
    const node: TraceNode = {
      id: 'x',
      own: [{ model: 'm', lane: 'text', weight: 1, work: [1, 1] }],
      meanGapMs: 2_000,
      bursts: [],
    };
    const reqs = traceRequests({ seed: 1, nodes: [node], recordedMs: 600_000, compress: 1 });
    const perMinute = Array.from(
      { length: 10 },
      (_, m) => reqs.filter((r) => Math.floor(r.atMs / 60_000) === m).length,
    );
    expect(Math.max(...perMinute)).toBeGreaterThan(2 * Math.min(...perMinute));
  });
});

describe('trace rows and targets', () => {
  const answer = (node: string, kind: 'own' | 'burst', ms: number, burst: number | null = null) => ({
    req: { atMs: 0, node, kind, burst, model: 'chat-a', lane: 'text' as const, work: 8, stream: false },
    ok: true,
    ms,
    endedAt: 10_000 + ms,
  });
  const work = Object.fromEntries(['n1', 'n2', 'n3', 'n4'].map((n) => [n, { loads: 1, busyMs: 100 }]));
  const rowOf = (setup: 'no-links' | 'links' | 'replicas', own: number, owner: number) =>
    traceRow(
      setup,
      [...['n1', 'n2', 'n3', 'n4'].map((n) => answer(n, 'own', own)), answer('n1', 'burst', owner, 0)],
      work,
    );

  it("a row per setup: the owners' p95, each node's own p95, bursts, loads and busy time", () => {
    const r = rowOf('links', 400, 900);
    expect(r).toMatchObject({
      scenario: 'trace',
      setup: 'links',
      owner_p95_ms: 900,
      own_p95_ms: { n1: 400, n2: 400, n3: 400, n4: 400 },
      failed: 0,
      requests: 5,
    });
    expect(r.bursts).toEqual([{ node: 'n1', model: 'chat-a', jobs: 1, makespan_ms: 900 }]);
    expect(r.loads).toEqual({ n1: 1, n2: 1, n3: 1, n4: 1 });
  });

  it('meets when links keep own p95 within 1.05 × and the owners do no worse than with replicas', () => {
    expect(
      traceVerdict([rowOf('no-links', 400, 3000), rowOf('links', 410, 900), rowOf('replicas', 900, 1200)]).meets,
    ).toBe(true);
    expect(
      traceVerdict([rowOf('no-links', 400, 3000), rowOf('links', 450, 900), rowOf('replicas', 900, 1200)]),
    ).toMatchObject({ meets: false, worstOwnRatio: 1.125 });
    expect(
      traceVerdict([rowOf('no-links', 400, 3000), rowOf('links', 400, 1300), rowOf('replicas', 900, 1200)]).meets,
    ).toBe(false);
  });
});

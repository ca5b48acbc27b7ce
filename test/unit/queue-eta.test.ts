import { describe, expect, it } from 'vitest';
import type { CostFit } from '../../src-router/costs/fit';
import { engineFreeAt, lentEtas, queueEtas } from '../../src-router/queue/queue-eta';

// Issue #15: the Nodes page's predicted start and finish of held requests, from the model's cost fit. Pure: the
// clock is a number passed in.

const NOW = 1_000_000;
/** 100 ms + 10 ms per token. */
const scaled: CostFit = { kind: 'scaled', interceptMs: 100, slopeMsPerWork: 10, samples: 5 };
const constant: CostFit = { kind: 'constant', work: 8, meanMs: 500, samples: 5 };

describe('engineFreeAt: the engine runs its active jobs one after another', () => {
  it('an idle engine is free now', () => {
    expect(engineFreeAt(NOW, scaled, [])).toBe(NOW);
  });

  it("the running job's remainder, then the job behind it inside the engine", () => {
    // Reached at NOW-300 (job 100+10×20 = 300 ms: due now) and NOW-100 (job 200 ms, starts after the first).
    expect(
      engineFreeAt(NOW, scaled, [
        { startedAt: NOW - 100, work: 10 },
        { startedAt: NOW - 300, work: 20 },
      ]),
    ).toBe(NOW + 200);
    expect(engineFreeAt(NOW, scaled, [{ startedAt: NOW - 50, work: 20 }])).toBe(NOW + 250);
  });

  it('an overrunning job is predicted to end now, never in the past', () => {
    expect(engineFreeAt(NOW, scaled, [{ startedAt: NOW - 10_000, work: 5 }])).toBe(NOW);
  });

  it('an active job the fit cannot price: unknown', () => {
    expect(engineFreeAt(NOW, null, [{ startedAt: NOW, work: 5 }])).toBeNull();
    expect(engineFreeAt(NOW, constant, [{ startedAt: NOW, work: 9 }])).toBeNull();
  });
});

describe('queueEtas: each waiting request starts when the one before it finishes', () => {
  it('positions from 1, starts and finishes chained behind the engine', () => {
    const etas = queueEtas({
      now: NOW,
      fit: scaled,
      active: [{ startedAt: NOW - 100, work: 20 }],
      waiting: [10, 0, 30],
    });
    expect(etas).toEqual([
      { position: 1, startAt: NOW + 200, finishAt: NOW + 400 },
      { position: 2, startAt: NOW + 400, finishAt: NOW + 500 },
      { position: 3, startAt: NOW + 500, finishAt: NOW + 900 },
    ]);
  });

  it("the clock moving on moves a waiting request's prediction only once the engine overruns", () => {
    const q = { fit: scaled, active: [{ startedAt: NOW, work: 10 }], waiting: [10] };
    expect(queueEtas({ ...q, now: NOW + 100 })[0].startAt).toBe(NOW + 200);
    expect(queueEtas({ ...q, now: NOW + 500 })[0].startAt).toBe(NOW + 500);
  });

  it('a constant fit prices its own work only: an unpriced request and every one behind it have no prediction', () => {
    const etas = queueEtas({ now: NOW, fit: constant, active: [], waiting: [8, 12, 8] });
    expect(etas).toEqual([
      { position: 1, startAt: NOW, finishAt: NOW + 500 },
      { position: 2, startAt: null, finishAt: null },
      { position: 3, startAt: null, finishAt: null },
    ]);
  });

  it('no fit yet: positions only', () => {
    expect(queueEtas({ now: NOW, fit: null, active: [], waiting: [1, 2] })).toEqual([
      { position: 1, startAt: null, finishAt: null },
      { position: 2, startAt: null, finishAt: null },
    ]);
  });
});

describe('lentEtas: a lent request finishes at its helper', () => {
  it('the first after the switch, the next after it (per helper, by when they were sent)', () => {
    const h = (sentAt: number, helper = 'b/m') => ({ sentAt, helper, helperJobMs: 300, helperSwitchMs: 1000 });
    expect(lentEtas([h(NOW + 50), h(NOW), h(NOW + 10, 'c/m')])).toEqual([NOW + 1600, NOW + 1300, NOW + 1310]);
  });

  it('a lease without a measured helper speed: none, for it and what follows at that helper', () => {
    expect(
      lentEtas([
        { sentAt: NOW, helper: 'b/m', helperJobMs: null, helperSwitchMs: null },
        { sentAt: NOW + 1, helper: 'b/m', helperJobMs: 300, helperSwitchMs: 0 },
      ]),
    ).toEqual([null, null]);
  });
});

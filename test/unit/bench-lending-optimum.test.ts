import { describe, expect, it } from 'vitest';
import {
  affine,
  type ClusterJob,
  clusterLowerBound,
  type JobCosts,
  optimalCluster,
  optimalSplit,
  ownerAloneMs,
} from '../../src-router/bench/lending-optimum';

// The lending-scenarios baseline: the exact best split of a burst's discrete jobs, not K / (1/a + 1/b).
const same = (n: number, ownerMs: number, helperMs: number): JobCosts[] =>
  Array.from({ length: n }, () => ({ ownerMs, helperMs }));

describe('optimal split of a burst over owner and helper', () => {
  it('equal jobs: the best whole number of jobs, not the fluid bound', () => {
    // 30 jobs, owner 100 ms, helper 60 ms: fluid bound 30 / (1/100 + 1/60) = 1125 ms; best discrete split 11 / 19 → 1140 ms
    const s = optimalSplit({ jobs: same(30, 100, 60), helperLoadMs: 0, pinned: 2 });
    expect(s).toMatchObject({ helperJobs: 19, ownerMs: 1100, helperMs: 1140 });
    expect(s.makespanMs).toBeCloseTo(1140, 6);
  });

  it("the helper's load is paid once: a shallow burst is not worth it, a deep one is", () => {
    expect(optimalSplit({ jobs: same(4, 100, 60), helperLoadMs: 400, pinned: 2 })).toMatchObject({
      helperJobs: 0,
      makespanMs: 400,
    });
    const deep = optimalSplit({ jobs: same(40, 100, 60), helperLoadMs: 400, pinned: 2 });
    expect(deep.helperJobs).toBeGreaterThan(0);
    expect(deep.makespanMs).toBeLessThan(ownerAloneMs(same(40, 100, 60)));
    expect(deep.makespanMs).toBeGreaterThanOrEqual(400);
  });

  it('mixed sizes: an exact partition (the pinned jobs stay with the owner)', () => {
    const tok = affine(0, 10);
    const jobs = [40, 40, 30, 10, 20, 20].map((w) => ({ ownerMs: tok(w), helperMs: tok(w) }));
    // owner keeps 40 + 40 = 800 ms; the helper takes the other 80 tokens = 800 ms
    expect(optimalSplit({ jobs, helperLoadMs: 0, pinned: 2 })).toMatchObject({ makespanMs: 800, helperJobs: 4 });
    // with one pinned job: owner 40 + 30 + 10 = 800, helper 40 + 20 + 20 = 800
    expect(optimalSplit({ jobs, helperLoadMs: 0, pinned: 1 }).makespanMs).toBe(800);
  });

  it('never worse than the owner alone; nothing to lend when everything is pinned', () => {
    expect(optimalSplit({ jobs: same(6, 10, 1000), helperLoadMs: 0, pinned: 2 })).toMatchObject({
      helperJobs: 0,
      makespanMs: 60,
    });
    expect(optimalSplit({ jobs: same(2, 10, 1), helperLoadMs: 0, pinned: 2 }).helperJobs).toBe(0);
  });
});

// The multi-node scenarios' baseline: every job on its owner or a linked helper, bursts at their offsets.
const cjobs = (n: number, owner: number, releaseMs: number, costMs: (number | null)[], depth = 2): ClusterJob[] =>
  Array.from({ length: n }, (_, i) => ({ releaseMs, owner, costMs, pinned: i < depth }));

describe('optimal assignment over several nodes', () => {
  it('one owner and one helper: the same answer as the two-sided split', () => {
    const c = optimalCluster({ jobs: cjobs(30, 0, 0, [100, 60]), loadMs: [0, 0] })!;
    expect(c.makespanMs).toBeCloseTo(
      optimalSplit({ jobs: same(30, 100, 60), helperLoadMs: 0, pinned: 2 }).makespanMs,
      6,
    );
    expect(c.jobsOn).toEqual([11, 19]);
  });

  it('two helpers: a fast one that must load and a slow loaded one both take work on a deep burst', () => {
    // owner 640 ms a job, slow helper 480 ms (loaded), fast helper 160 ms after a 1.5 s load; 20 jobs (12.8 s alone)
    const c = optimalCluster({ jobs: cjobs(20, 0, 0, [640, 480, 160]), loadMs: [0, 0, 1500] })!;
    expect(c.jobsOn.reduce((a, b) => a + b)).toBe(20);
    expect(c.jobsOn.every((n) => n > 0)).toBe(true);
    // Brute force over every count split (jobs are equal, so counts decide), two pinned on the owner.
    let best = Infinity;
    for (let s = 0; s <= 18; s++)
      for (let f = 0; s + f <= 18; f++)
        best = Math.min(best, Math.max((20 - s - f) * 640, s * 480, f ? 1500 + f * 160 : 0));
    expect(c.makespanMs).toBeCloseTo(best, 6);
  });

  it('two owners share one helper: a later burst cannot start before it arrives, the helper runs in release order', () => {
    // o1 at 0 and o2 at 1000, 4 jobs each of 500 ms on their owner, 250 ms on h (index 2); depth 0
    const jobs = [...cjobs(4, 0, 0, [500, null, 250], 0), ...cjobs(4, 1, 1000, [null, 500, 250], 0)];
    const c = optimalCluster({ jobs, loadMs: [0, 0, 0] })!;
    // Best: o1 keeps 2 (1000), h takes o1's 2 (500) then o2's 2 from 1000 (1500), o2 keeps 2 (2000); or better splits.
    let best = Infinity;
    for (let a = 0; a <= 4; a++)
      for (let b = 0; b <= 4; b++) {
        const h = a ? Math.max(a * 250, 1000) + b * 250 : 1000 + b * 250;
        best = Math.min(best, Math.max((4 - a) * 500, 1000 + (4 - b) * 500, a + b ? (b ? h : a * 250) : 0));
      }
    expect(c.makespanMs).toBeCloseTo(best, 6);
    expect(c.jobsOn[2]).toBeGreaterThan(0);
  });

  it('a job runs only where its links allow; pinned jobs stay with the owner', () => {
    const c = optimalCluster({ jobs: cjobs(3, 0, 0, [100, null], 3), loadMs: [0, 0] })!;
    expect(c).toEqual({ makespanMs: 300, jobsOn: [3, 0] });
  });

  it('a job with nowhere to run is a scenario error, not a silent optimum', () => {
    expect(() => optimalCluster({ jobs: cjobs(1, 0, 0, [null, 100], 1), loadMs: [0, 0] })).toThrow(/no machine/);
  });

  it('gives up past the state cap, and the lower bound then never exceeds the optimum', () => {
    const tok = [4, 40, 12, 28, 8, 36, 20, 4, 32, 16, 24, 10];
    const jobs = tok.map((w, i) => ({
      releaseMs: i < 6 ? 0 : 300,
      owner: i < 6 ? 0 : 1,
      costMs: [i < 6 ? w * 10 : null, i < 6 ? null : w * 12, w * 7],
      pinned: false,
    }));
    expect(optimalCluster({ jobs, loadMs: [0, 0, 0], maxStates: 10 })).toBeNull();
    const exact = optimalCluster({ jobs, loadMs: [0, 0, 0] })!;
    const lb = clusterLowerBound({ jobs, loadMs: [0, 0, 0] });
    expect(lb).toBeGreaterThan(0);
    expect(lb).toBeLessThanOrEqual(exact.makespanMs);
  });
});

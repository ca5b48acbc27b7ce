import { describe, expect, it } from 'vitest';
import { affine, optimalSplit, ownerAloneMs, type JobCosts } from '../../src-router/bench/lending-optimum';

// The lending-scenarios baseline: the exact best split of a burst's discrete jobs, not K / (1/a + 1/b).
const same = (n: number, ownerMs: number, helperMs: number): JobCosts[] => Array.from({ length: n }, () => ({ ownerMs, helperMs }));

describe('optimal split of a burst over owner and helper', () => {
  it('equal jobs: the best whole number of jobs, not the fluid bound', () => {
    // 30 jobs, owner 100 ms, helper 60 ms: fluid bound 30 / (1/100 + 1/60) = 1125 ms; best discrete split 11 / 19 → 1140 ms
    const s = optimalSplit({ jobs: same(30, 100, 60), helperLoadMs: 0, pinned: 2 });
    expect(s).toMatchObject({ helperJobs: 19, ownerMs: 1100, helperMs: 1140 });
    expect(s.makespanMs).toBeCloseTo(1140, 6);
  });

  it('the helper\'s load is paid once: a shallow burst is not worth it, a deep one is', () => {
    expect(optimalSplit({ jobs: same(4, 100, 60), helperLoadMs: 400, pinned: 2 })).toMatchObject({ helperJobs: 0, makespanMs: 400 });
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
    expect(optimalSplit({ jobs: same(6, 10, 1000), helperLoadMs: 0, pinned: 2 })).toMatchObject({ helperJobs: 0, makespanMs: 60 });
    expect(optimalSplit({ jobs: same(2, 10, 1), helperLoadMs: 0, pinned: 2 }).helperJobs).toBe(0);
  });
});

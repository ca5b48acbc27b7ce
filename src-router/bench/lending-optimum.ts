/**
 * The best possible makespan of a burst split between an owner and one helper (the lending-scenarios baseline).
 * Pure. Every job of the burst arrives at once; each side runs its jobs one at a time with the next one always
 * waiting (the depth-2 pipeline: no gap between jobs), so a side finishes after the sum of its jobs' times. The
 * first `pinned` jobs (the owner's pipe, scheduling_backend_depth) never move. The helper pays its load once
 * before its first job when it must switch; its restore comes after its last job, so it is off the critical path
 * of the burst and is reported, not added. The split is exact (to 0.1 ms): every achievable helper total is
 * kept with the least owner total that goes with it.
 */

/** One job's measured time on each side, ms. */
export interface JobCosts {
  ownerMs: number;
  helperMs: number;
}

export interface SplitInput {
  /** The burst's jobs in arrival order. */
  jobs: JobCosts[];
  /** The helper's load before its first lent job (0 when the linked model is loaded). */
  helperLoadMs: number;
  /** Jobs that go straight to the owner's engine (the depth), never lendable. */
  pinned: number;
}

export interface Split {
  makespanMs: number;
  /** Jobs given to the helper. */
  helperJobs: number;
  ownerMs: number;
  /** The helper's load and jobs (0 when it gets none). */
  helperMs: number;
}

/** A side's cost of one job of `work` from an affine fit (a constant fit: slope 0). */
export const affine = (interceptMs: number, slopeMsPerWork: number) => (work: number) => interceptMs + slopeMsPerWork * work;

/** No lending at all: the owner drains the whole burst. */
export function ownerAloneMs(jobs: JobCosts[]): number {
  return jobs.reduce((a, j) => a + j.ownerMs, 0);
}

const UNIT = 10; // sums kept in 0.1 ms

/** The exact best split (ties: fewer jobs lent). States: achievable helper totals, each with its least owner total. */
export function optimalSplit(i: SplitInput): Split {
  const pinned = Math.min(i.jobs.length, Math.max(0, i.pinned));
  const ownerPinned = i.jobs.slice(0, pinned).reduce((a, j) => a + j.ownerMs, 0);
  // helper total (units) → { least owner total, jobs lent for it }
  let states = new Map<number, { owner: number; lent: number }>([[0, { owner: 0, lent: 0 }]]);
  for (const job of i.jobs.slice(pinned)) {
    const h = Math.round(job.helperMs * UNIT);
    const next = new Map<number, { owner: number; lent: number }>();
    const keep = (key: number, owner: number, lent: number) => {
      const cur = next.get(key);
      if (!cur || owner < cur.owner - 1e-9 || (Math.abs(owner - cur.owner) <= 1e-9 && lent < cur.lent)) next.set(key, { owner, lent });
    };
    for (const [hk, s] of states) {
      keep(hk, s.owner + job.ownerMs, s.lent);
      keep(hk + h, s.owner, s.lent + 1);
    }
    states = next;
  }
  let best: Split | null = null;
  for (const [hk, s] of states) {
    const ownerMs = ownerPinned + s.owner;
    const helperMs = s.lent ? i.helperLoadMs + hk / UNIT : 0;
    const makespanMs = Math.max(ownerMs, helperMs);
    if (!best || makespanMs < best.makespanMs - 1e-9 || (Math.abs(makespanMs - best.makespanMs) <= 1e-9 && s.lent < best.helperJobs)) best = { makespanMs, helperJobs: s.lent, ownerMs, helperMs };
  }
  return best!;
}

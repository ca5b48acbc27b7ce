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
export const affine = (interceptMs: number, slopeMsPerWork: number) => (work: number) =>
  interceptMs + slopeMsPerWork * work;

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
      if (!cur || owner < cur.owner - 1e-9 || (Math.abs(owner - cur.owner) <= 1e-9 && lent < cur.lent))
        next.set(key, { owner, lent });
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
    if (
      !best ||
      makespanMs < best.makespanMs - 1e-9 ||
      (Math.abs(makespanMs - best.makespanMs) <= 1e-9 && s.lent < best.helperJobs)
    )
      best = { makespanMs, helperJobs: s.lent, ownerMs, helperMs };
  }
  return best!;
}

/**
 * Several nodes (the multi-node scenarios). Every machine runs its jobs one at a time in release order with no gap
 * (the depth-2 pipeline); a job starts no earlier than its burst's release; a machine that must load its model
 * pays the load once, from the release of the first job it takes. The first `pinned` jobs of each burst stay on
 * its owner. A job may run only on the machines that give it a cost (its owner and the helpers its links name).
 */
export interface ClusterJob {
  /** Unix-relative ms at which the job's burst arrives (0 for the first burst). */
  releaseMs: number;
  /** Index of the machine that owns the job (its pinned jobs run there). */
  owner: number;
  /** The job's cost on each machine, null where it may not run. */
  costMs: (number | null)[];
  /** Pinned to its owner (one of the first `depth` jobs of its burst). */
  pinned: boolean;
}

export interface ClusterInput {
  jobs: ClusterJob[];
  /** Each machine's load before its first job (0 when the model it would run is loaded). */
  loadMs: number[];
  /** Give up (null) past this many distinct states per step: the exact search is then out of reach. */
  maxStates?: number;
}

export interface ClusterSplit {
  makespanMs: number;
  /** Jobs each machine runs. */
  jobsOn: number[];
}

/**
 * The exact best assignment of every job to a machine (to 0.1 ms), or null when the search would pass `maxStates`.
 * Jobs go in release order; a state is every machine's finish time (negative: not used yet) and the jobs each runs.
 */
export function optimalCluster(i: ClusterInput): ClusterSplit | null {
  const m = i.loadMs.length;
  const cap = i.maxStates ?? 200_000;
  const jobs = [...i.jobs].sort((a, b) => a.releaseMs - b.releaseMs);
  type State = { finish: number[]; on: number[] };
  let states = new Map<string, State>([
    [Array(m).fill(-1).join(','), { finish: Array(m).fill(-1), on: Array(m).fill(0) }],
  ]);
  for (const job of jobs) {
    const next = new Map<string, State>();
    for (const s of states.values()) {
      for (let k = 0; k < m; k++) {
        const c = job.costMs[k];
        if (c === null || c === undefined || (job.pinned && k !== job.owner)) continue;
        const start = s.finish[k] < 0 ? job.releaseMs + i.loadMs[k] : Math.max(s.finish[k], job.releaseMs);
        const finish = [...s.finish];
        finish[k] = Math.round((start + c) * UNIT) / UNIT;
        const key = finish.join(',');
        if (next.has(key)) continue;
        const on = [...s.on];
        on[k]++;
        next.set(key, { finish, on });
      }
    }
    if (next.size === 0) throw new Error(`a job released at ${job.releaseMs} ms has no machine it may run on`);
    if (next.size > cap) return null;
    states = next;
  }
  let best: ClusterSplit | null = null;
  for (const s of states.values()) {
    const ms = Math.max(0, ...s.finish);
    if (!best || ms < best.makespanMs - 1e-9) best = { makespanMs: ms, jobsOn: s.on };
  }
  return best;
}

/**
 * A lower bound on any assignment when the exact search is out of reach: no job ends before its release plus its
 * cheapest cost, and the jobs released at or after each release cannot, at their cheapest, share the machines
 * better than evenly. Loads and pinning are left out, so it never exceeds the optimum.
 */
export function clusterLowerBound(i: ClusterInput): number {
  const m = i.loadMs.length;
  const cheapest = i.jobs.map((j) => Math.min(...j.costMs.filter((c): c is number => c !== null)));
  let lb = 0;
  i.jobs.forEach((j, n) => (lb = Math.max(lb, j.releaseMs + cheapest[n])));
  for (const r of new Set(i.jobs.map((j) => j.releaseMs))) {
    const work = i.jobs.reduce((a, j, n) => a + (j.releaseMs >= r ? cheapest[n] : 0), 0);
    lb = Math.max(lb, r + work / m);
  }
  return lb;
}

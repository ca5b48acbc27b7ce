/** The numbers a replay compares, as recorded and as replayed (pure). */
import type { ReplayOutcomeWire } from '../../contract/replay';
import type { DecisionInput } from '../../store';

export interface TimedRequest {
  id: string;
  arrivedAt: number;
  finishedAt: number;
  waitMs: number;
}

/** Nearest-rank percentile; null without values. */
export function percentile(xs: readonly number[], p: number): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/**
 * Bursts of the recorded traffic: a burst runs from an arrival until the cluster has finished everything that
 * arrived so far; the next arrival after that starts a new one. The same partition is used for the replay, so each
 * burst's makespans compare request for request.
 */
export function burstsOf(recorded: readonly TimedRequest[]): Map<string, number> {
  const out = new Map<string, number>();
  let index = -1;
  let until = -Infinity;
  for (const r of [...recorded].sort((a, b) => a.arrivedAt - b.arrivedAt || (a.id < b.id ? -1 : 1))) {
    if (r.arrivedAt >= until) index++;
    until = Math.max(until, r.finishedAt);
    out.set(r.id, index);
  }
  return out;
}

/** Lent, returned and cut-off requests from decision rows (the owner's `lent` and `returned` dispatch rows). */
export function lendingCounts(rows: readonly Pick<DecisionInput, 'kind' | 'event' | 'reason'>[]): {
  lent: number;
  returned: number;
  cutOff: number;
} {
  let lent = 0;
  let returned = 0;
  let cutOff = 0;
  for (const r of rows) {
    if (r.kind !== 'dispatch') continue;
    if (r.event === 'lent') lent++;
    else if (r.event === 'returned') {
      if (r.reason === 'cut_off') cutOff++;
      else returned++;
    }
  }
  return { lent, returned, cutOff };
}

export function outcomeOf(
  requests: readonly TimedRequest[],
  bursts: Map<string, number>,
  counts: { lent: number; returned: number; cutOff: number },
  loads: number,
): ReplayOutcomeWire {
  const byBurst = new Map<number, { start: number; end: number; n: number }>();
  for (const r of requests) {
    const i = bursts.get(r.id);
    if (i === undefined) continue;
    const b = byBurst.get(i) ?? { start: Infinity, end: -Infinity, n: 0 };
    b.start = Math.min(b.start, r.arrivedAt);
    b.end = Math.max(b.end, r.finishedAt);
    b.n++;
    byBurst.set(i, b);
  }
  const completions = requests.map((r) => r.finishedAt - r.arrivedAt);
  const waits = requests.map((r) => r.waitMs);
  return {
    requests: requests.length,
    bursts: [...byBurst]
      .sort((a, b) => a[0] - b[0])
      .map(([index, b]) => ({ index, startedAt: b.start, requests: b.n, makespanMs: b.end - b.start })),
    waitP50Ms: percentile(waits, 50),
    waitP95Ms: percentile(waits, 95),
    completionP50Ms: percentile(completions, 50),
    completionP95Ms: percentile(completions, 95),
    ...counts,
    loads,
  };
}

/**
 * Predicted start and finish of the requests in a router queue (the Nodes page), from the model's cost
 * fit (PRICE-2). Pure: the caller passes the clock reading.
 *
 * The engine runs one job at a time (a linked model serves one request at a time, LLM-1): a job reaching the engine
 * while another runs there starts when that one finishes. So the engine is free at the end of the chain of its
 * active jobs (each `begin = max(previous finish, reached the engine)`, `finish = begin + predicted job`; never
 * before `now`), and each waiting request, in queue order, starts when the one before it finishes. A job the fit
 * cannot price (no fit yet, or a constant fit for another size) has no prediction, and neither has any request
 * behind it.
 *
 * A lent request finishes at the helper: the requests lent to one helper run there one after another, the first
 * after the lease's predicted switch (`finish = max(previous finish, sent + switch for the first) + helper job`,
 * as `lending/holds.ts` predicts the helper's lent work); a lease without measured helper speed has no prediction.
 */
import { type CostFit, predict } from '../costs/fit';

export interface EtaActive {
  /** When it reached the engine (unix ms). */
  startedAt: number;
  work: number;
}

export interface EtaQuery {
  now: number;
  fit: CostFit | null;
  /** Requests at the engine, in any order. */
  active: EtaActive[];
  /** Work of each waiting request, in queue order. */
  waiting: number[];
}

export interface Eta {
  /** 1-based place in the queue. */
  position: number;
  /** Predicted start at the engine / finish (unix ms); null when unpriced. */
  startAt: number | null;
  finishAt: number | null;
}

/** When the engine is predicted to be free of its active jobs; null when one of them cannot be priced. */
export function engineFreeAt(now: number, fit: CostFit | null, active: EtaActive[]): number | null {
  let t = -Infinity;
  for (const a of [...active].sort((x, y) => x.startedAt - y.startedAt)) {
    const job = predict(fit, a.work);
    if (job === null) return null;
    t = Math.max(t, a.startedAt) + job;
  }
  return Math.max(t, now);
}

/** Position, predicted start and finish of every waiting request, in queue order. */
export function queueEtas(q: EtaQuery): Eta[] {
  let free = engineFreeAt(q.now, q.fit, q.active);
  return q.waiting.map((work, i) => {
    const job = free === null ? null : predict(q.fit, work);
    if (free === null || job === null) {
      free = null;
      return { position: i + 1, startAt: null, finishAt: null };
    }
    const startAt = free;
    free = startAt + job;
    return { position: i + 1, startAt, finishAt: free };
  });
}

export interface LentEtaItem {
  /** When it was sent to the helper (unix ms). */
  sentAt: number;
  /** `node/model` of the helper. */
  helper: string;
  helperJobMs: number | null;
  helperSwitchMs: number | null;
}

/**
 * Predicted finish at the helper of each lent request, in the order given. A request lent under a lease without a
 * measured helper speed has none, and neither have the ones sent to that helper after it.
 */
export function lentEtas(items: LentEtaItem[]): (number | null)[] {
  const out: (number | null)[] = items.map(() => null);
  const byHelper = new Map<string, number[]>();
  items.forEach((it, i) => byHelper.set(it.helper, [...(byHelper.get(it.helper) ?? []), i]));
  for (const idx of byHelper.values()) {
    let t: number | null = -Infinity;
    idx
      .sort((a, b) => items[a].sentAt - items[b].sentAt || a - b)
      .forEach((i, k) => {
        const it = items[i];
        t =
          t === null || it.helperJobMs === null
            ? null
            : Math.max(t, it.sentAt + (k === 0 ? (it.helperSwitchMs ?? 0) : 0)) + it.helperJobMs;
        out[i] = t;
      });
  }
  return out;
}

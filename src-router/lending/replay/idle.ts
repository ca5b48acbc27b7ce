/**
 * Each node's own-work idleness when the replay starts (PROBE-3, PRICE-7). Pure.
 *
 * Live (`cluster/activity.ts`), a node has been idle since its last own request or own load ended, or since it started
 * when it had none; borrowed work does not count, a lent-out request of its own does (it is the owner's request until
 * its answer is back). A probe (PROBE-1) goes only to a helper idle for `offload_probe_idle` (× 12 when it must load),
 * so where this idleness starts decides when the first lease of a burst — a probe while nobody is priced — can go.
 *
 * The stores keep no start time, so the replay takes, per node: the idleness the master measured at the range's first
 * decisions (a plan row's `helperIdleMs`: idle since `at − helperIdleMs`), from its earliest row before the node's own
 * first replayed arrival; else the end of its last own request before the range; else the range's start (the replay
 * knows nothing before it; never "idle forever", which made every probe due at once whatever the setting).
 */
import type { RequestRow } from '../../store';
import type { IdleSample, ReplayRequest } from './types';

export interface IdleAtStart {
  /** Own work last ended (or the node started) at this time: `ownIdleMs` = now − idleSince while no own work runs. */
  idleSince: number;
  /** An own request last ended here (PRICE-7's `sinceOwnRequestMs`), null when none is recorded. */
  lastOwnRequestEnd: number | null;
}

/** The node whose own request a history row ends: its server, or, for a borrowed job, the owner it names. */
function ownerOfRow(r: RequestRow): string {
  if (!r.lentFrom) return r.nodeId;
  const slash = r.lentFrom.indexOf('/');
  return slash < 0 ? r.lentFrom : r.lentFrom.slice(0, slash);
}

/** The latest end of each node's own requests before the range (a helper's borrowed job ends its owner's request). */
export function lastOwnRequestEnds(history: readonly RequestRow[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of history) {
    const node = ownerOfRow(r);
    if (r.finishedAt > (out.get(node) ?? -Infinity)) out.set(node, r.finishedAt);
  }
  return out;
}

/** A node's idleness at the replay's start (see the file comment for the order of the evidence). */
export function idleAtStart(
  nodeId: string,
  o: {
    from: number;
    history: readonly RequestRow[];
    requests: readonly ReplayRequest[];
    samples?: readonly IdleSample[];
  },
  ends: Map<string, number> = lastOwnRequestEnds(o.history),
): IdleAtStart {
  const lastOwnRequestEnd = ends.get(nodeId) ?? null;
  const firstArrival = o.requests.reduce((m, r) => (r.node === nodeId ? Math.min(m, r.arrivedAt) : m), Infinity);
  const measured = (o.samples ?? [])
    .filter((s) => s.nodeId === nodeId && s.idleMs > 0 && s.at <= firstArrival)
    .reduce<IdleSample | null>((a, s) => (a === null || s.at < a.at ? s : a), null);
  const idleSince = measured ? measured.at - measured.idleMs : (lastOwnRequestEnd ?? o.from);
  return { idleSince, lastOwnRequestEnd };
}

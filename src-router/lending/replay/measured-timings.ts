/**
 * The cluster's own timings, measured from a record (pure): how long an owner's event took to bring its lease, and
 * one way of a lent request's relay. A replay takes them instead of loopback constants, so a record made on a busy
 * machine (or over a real network) is replayed with the latencies it had. Each is read on one node's clock only:
 * nodes' clocks need not agree.
 */
import type { DecisionRow, RequestRow } from '../../store';
import { percentile } from './summary';

export interface MeasuredTimings {
  /** Median (nearest rank) `decisionMs` of the owners' `lease_updated` rows that answered an event; null without one. */
  decisionLatencyMs: number | null;
  /** Median of half of each lent request's round trip beyond its job at the helper; null without a matched one. */
  relayMs: number | null;
}

/** A lent request as its owner recorded it, its `lent` row, and the job the helper recorded for it. */
export interface LentTrip {
  ownerRow: RequestRow;
  lent: DecisionRow;
  helperJob: RequestRow;
}

export function measuredTimings(decisions: readonly DecisionRow[], trips: readonly LentTrip[]): MeasuredTimings {
  const decided: number[] = [];
  for (const d of decisions) {
    const ms = d.kind === 'dispatch' && d.event === 'lease_updated' ? d.details?.decisionMs : undefined;
    if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0) decided.push(ms);
  }
  // The owner's clock from the dispatch to the answer, less the helper's own time with it (a duration: no clock).
  const hops = trips
    .map((t) => (t.ownerRow.finishedAt - t.lent.at - t.helperJob.durationMs) / 2)
    .filter((ms) => ms >= 0);
  return { decisionLatencyMs: percentile(decided, 50), relayMs: percentile(hops, 50) };
}

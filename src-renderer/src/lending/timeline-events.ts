import type {
  DecisionRowWire,
  TimelineLoadWire,
  TimelinePageWire,
  TimelineRequestWire,
} from '../../../src-router/contract';

/**
 * The lease timeline's events, pure: the request and load analytics of every node (`GET /router/v1/console/timeline`)
 * and the lending rows of the decision log, as one list of spans and instants, each placed on a node and lane and
 * keeping the row it came from (the hover shows it). Only the contract is imported: the benchmark measures this in
 * Node (src-router/bench/timeline-layout.ts). Tested in renderer-timeline.test.ts.
 *
 * - own job / borrowed job: a request at its engine (its queue wait left out), on the node that served it; a
 *   borrowed one coloured by its owner. A helper's row of a lent request names the owner (`lentFrom`); the owner
 *   keeps a copy (recorded as the helper's work) that is shown only when the helper's row is not there.
 * - load / restore: an engine load; a restore loads back the model an earlier load on that lane displaced.
 * - lease / probe lease: from the owner's `lease_updated` to the next update or clear of that model, or its TTL;
 *   renewals of the same lease (helper, slots, probe) are one span.
 * - grant (the master's plan row granted or probe), hold (`held_for_helper`), lent, returned, cut-off (a return
 *   because of HOLD-4's cut-off or HELPER-5's stall), fate (`lent_fate`: how a lent request whose relay broke was
 *   resolved at its helper): instants.
 */

export type TimelineKind =
  | 'own'
  | 'borrowed'
  | 'load'
  | 'restore'
  | 'lease'
  | 'probe'
  | 'grant'
  | 'hold'
  | 'lent'
  | 'returned'
  | 'cutoff'
  | 'fate';

/** Spans sit on a lane's jobs track, leases and the lending instants on its lending track. */
export const LENDING_TRACK_KINDS: ReadonlySet<TimelineKind> = new Set([
  'lease',
  'probe',
  'grant',
  'hold',
  'lent',
  'returned',
  'cutoff',
  'fate',
]);
export const INSTANT_KINDS: ReadonlySet<TimelineKind> = new Set([
  'grant',
  'hold',
  'lent',
  'returned',
  'cutoff',
  'fate',
]);

export type TimelineSource =
  | { type: 'decision'; row: DecisionRowWire }
  | { type: 'request'; row: TimelineRequestWire; recordedBy: string }
  | { type: 'load'; row: TimelineLoadWire };

export interface TimelineEvent {
  /** Unique in the list and stable across reads (the hover keeps it). */
  id: string;
  kind: TimelineKind;
  node: string;
  lane: string;
  start: number;
  /** Equal to `start` for an instant. */
  end: number;
  /** What picks the colour inside a kind: the owner (`node/model`) of a borrowed job, else the kind. */
  colorKey: string;
  label: string;
  source: TimelineSource;
  /** The decision row behind a job: the owner's `lent` row of a borrowed one. */
  decision: DecisionRowWire | null;
  /** Renewals folded into a lease span (1 for any other event). */
  count: number;
}

/** The decision events the timeline reads (the console asks the log for these only). */
export const TIMELINE_DECISION_EVENTS = [
  'granted',
  'probe',
  'lease_updated',
  'lease_cleared',
  'lent',
  'returned',
  'held_for_helper',
  'borrowed_returned',
  'lent_fate',
] as const;

const CUT_OFF_REASONS = new Set(['cut_off', 'helper_stalled']);

/** The lane of a request without a load row to say it: by its endpoint. */
export function laneOfEndpoint(endpoint: string): string {
  return endpoint === 'image' ? 'image' : endpoint === 'transcription' ? 'whisper' : 'text';
}

const key = (node: string | null, model: string | null) => `${node ?? ''}/${model ?? ''}`;

export function timelineEvents(page: TimelinePageWire | null, decisions: readonly DecisionRowWire[]): TimelineEvent[] {
  const out: TimelineEvent[] = [];
  const nodes = page?.nodes ?? [];
  const to = page?.to ?? Number.POSITIVE_INFINITY;

  // Lanes of local models from their loads (a kobold node's `shared` lane included).
  const laneOf = new Map<string, string>();
  for (const n of nodes) for (const l of n.loads) laneOf.set(key(l.nodeId, l.localId), l.lane);
  const lane = (node: string | null, model: string | null, fallback = 'text') =>
    laneOf.get(key(node, model)) ?? fallback;

  const lentRows = new Map<string, DecisionRowWire>();
  for (const d of decisions) if (d.event === 'lent' && d.requestId) lentRows.set(d.requestId, d);

  // Requests: a helper's row of a borrowed one wins over the owner's copy.
  const helperCopies = new Set<string>();
  for (const n of nodes)
    for (const r of n.requests) if (r.nodeId === n.nodeId && r.lentFrom && r.requestId) helperCopies.add(r.requestId);
  for (const n of nodes) {
    for (const r of n.requests) {
      if (r.outcome === 'returned') continue; // handed back unstarted: its return is an instant of the decision log
      const ownerCopy = r.nodeId !== n.nodeId;
      if (ownerCopy && r.requestId && helperCopies.has(r.requestId)) continue;
      const lent = r.requestId ? (lentRows.get(r.requestId) ?? null) : null;
      const owner =
        r.lentFrom ?? (ownerCopy ? (lent ? key(lent.ownerNode, lent.ownerModel) : key(n.nodeId, r.model)) : null);
      const start = r.finishedAt - Math.max(0, r.durationMs - r.queueWaitMs);
      out.push({
        id: `r:${n.nodeId}:${r.id}`,
        kind: owner ? 'borrowed' : 'own',
        node: r.nodeId,
        lane: lane(r.nodeId, r.localId, laneOfEndpoint(r.endpoint)),
        start,
        end: r.finishedAt,
        colorKey: owner ?? 'own',
        label: owner ? `${r.localId} for ${owner}` : r.localId,
        source: { type: 'request', row: r, recordedBy: n.nodeId },
        decision: lent,
        count: 1,
      });
    }
  }

  // Loads, oldest first per lane: a load of what the previous load there displaced is a restore.
  for (const n of nodes) {
    const displaced = new Map<string, string | null>();
    for (const l of [...n.loads].sort((a, b) => a.finishedAt - b.finishedAt || a.id - b.id)) {
      const laneKey = key(l.nodeId, l.lane);
      const restore = l.success && displaced.get(laneKey) === l.localId;
      if (l.success) displaced.set(laneKey, l.displacedLocalId);
      out.push({
        id: `l:${n.nodeId}:${l.id}`,
        kind: restore ? 'restore' : 'load',
        node: l.nodeId,
        lane: l.lane,
        start: l.finishedAt - l.durationMs,
        end: l.finishedAt,
        colorKey: restore ? 'restore' : l.success ? 'load' : 'load_failed',
        label: `${restore ? 'restore' : 'load'} ${l.localId}${l.success ? '' : ' (failed)'}`,
        source: { type: 'load', row: l },
        decision: null,
        count: 1,
      });
    }
  }

  // Decision rows, oldest first (the log is newest first).
  const rows = [...decisions].sort(
    (a, b) => a.at - b.at || (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : a.id - b.id),
  );
  const open = new Map<string, TimelineEvent>();
  const close = (ownerKey: string, at: number) => {
    const lease = open.get(ownerKey);
    if (!lease) return;
    lease.end = Math.max(lease.start, Math.min(lease.end, at));
    open.delete(ownerKey);
  };
  const instant = (d: DecisionRowWire, kind: TimelineKind, node: string | null, model: string | null, label: string) =>
    out.push({
      id: `d:${d.nodeId}:${d.id}`,
      kind,
      node: node ?? d.nodeId,
      lane: lane(node ?? d.nodeId, model),
      start: d.at,
      end: d.at,
      colorKey: kind,
      label,
      source: { type: 'decision', row: d },
      decision: d,
      count: 1,
    });
  const helperName = (d: DecisionRowWire) => key(d.helperNode, d.helperModel);

  for (const d of rows) {
    const ownerKey = key(d.ownerNode ?? d.nodeId, d.ownerModel);
    switch (d.event) {
      case 'lease_updated': {
        const probe = d.details?.probe === true;
        const ttl = typeof d.details?.ttlMs === 'number' ? d.details.ttlMs : 0;
        const current = open.get(ownerKey);
        const same =
          current &&
          current.colorKey === helperName(d) &&
          current.kind === (probe ? 'probe' : 'lease') &&
          current.source.type === 'decision' &&
          current.source.row.slots === d.slots;
        if (current && same && d.at <= current.end) {
          current.end = Math.min(to, d.at + ttl);
          current.count += 1;
          current.label = `${probe ? 'probe ' : ''}lease → ${helperName(d)} ×${d.slots ?? '?'} (${current.count} renewals)`;
          break;
        }
        close(ownerKey, d.at);
        const ev: TimelineEvent = {
          id: `d:${d.nodeId}:${d.id}`,
          kind: probe ? 'probe' : 'lease',
          node: d.ownerNode ?? d.nodeId,
          lane: lane(d.ownerNode ?? d.nodeId, d.ownerModel),
          start: d.at,
          end: Math.min(to, d.at + ttl),
          colorKey: helperName(d),
          label: `${probe ? 'probe ' : ''}lease → ${helperName(d)} ×${d.slots ?? '?'}`,
          source: { type: 'decision', row: d },
          decision: d,
          count: 1,
        };
        open.set(ownerKey, ev);
        out.push(ev);
        break;
      }
      case 'lease_cleared':
        close(ownerKey, d.at);
        break;
      case 'granted':
      case 'probe':
        if (d.kind === 'plan')
          instant(
            d,
            'grant',
            d.ownerNode,
            d.ownerModel,
            `${d.event === 'probe' ? 'probe' : 'granted'} ×${d.slots ?? '?'} → ${helperName(d)}`,
          );
        break;
      case 'held_for_helper':
        instant(d, 'hold', d.nodeId, d.ownerModel, `held for ${helperName(d)}`);
        break;
      case 'lent':
        instant(d, 'lent', d.nodeId, d.ownerModel, `lent to ${helperName(d)}`);
        break;
      case 'returned':
        instant(
          d,
          CUT_OFF_REASONS.has(d.reason ?? '') ? 'cutoff' : 'returned',
          d.nodeId,
          d.ownerModel,
          `${CUT_OFF_REASONS.has(d.reason ?? '') ? 'cut off' : 'returned'} from ${helperName(d)} (${d.reason ?? '—'})`,
        );
        break;
      case 'borrowed_returned':
        instant(
          d,
          'returned',
          d.nodeId,
          d.helperModel,
          `handed back to ${key(d.ownerNode, d.ownerModel)} (${d.reason ?? '—'})`,
        );
        break;
      case 'lent_fate':
        instant(
          d,
          'fate',
          d.nodeId === d.helperNode ? d.nodeId : (d.ownerNode ?? d.nodeId),
          d.ownerModel,
          `relay broke: ${d.reason ?? '—'} at ${helperName(d)}`,
        );
        break;
      default:
        break;
    }
  }
  return out;
}

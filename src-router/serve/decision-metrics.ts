/**
 * Prometheus counters of the decision log (LOG-1..4): every row the node's writer writes is counted here once, by
 * its event and reason, and the lending events also by owner and helper. The writer calls `count` for each row once
 * its batch is committed, so the counts equal the log's rows (a dropped row is not counted). Label values are
 * folded (metric-labels.ts).
 */
import type { Registry } from 'prom-client';
import type {
  BorrowedReturnedReason,
  GuardianRoutedReason,
  LeaseClearedReason,
  LentFateReason,
  RelayRefusedReason,
  ReturnedReason,
} from '../lending/decision-rows';
import { RETURNED_REASONS } from '../lending/decision-rows';
import type { SkipReason } from '../lending/types';
import type { DecisionEvent, DecisionInput, DecisionKind } from '../store/decision-log-row';
import { BoundCounter, BoundHistogram } from './bound-metrics';
import { ChildTree, ClosedLabel, NONE, OpenLabel } from './metric-labels';

const keys = <T extends string>(r: Record<T, true>) => Object.keys(r) as T[];

export const SKIP_REASONS = keys<SkipReason>({
  owner_unpriced: true,
  switch_unpriced: true,
  service_unpriced: true,
  cost_rejected: true,
  outranked: true,
  helper_not_accepting: true,
  helper_claimed: true,
  load_forbidden: true,
  context_too_small: true,
  restore_unpriced: true,
  helper_recently_busy: true,
  helper_unreachable: true,
  owner_ineligible: true,
  helper_ineligible: true,
});
const RELAY_REFUSED = keys<RelayRefusedReason>({ no_live_lease: true, helper_unreachable: true, forward_failed: true });
const LENT_FATES = keys<LentFateReason>({
  withdrawn: true,
  answered: true,
  failed: true,
  helper_gone: true,
  unresolved: true,
  taken_back: true,
  lost: true,
  dropped: true,
  started_twice: true,
});
const BORROWED_RETURNED = keys<BorrowedReturnedReason>({
  busy_on_arrival: true,
  own_work_arrived: true,
  no_link: true,
  load_forbidden: true,
  withdrawn: true,
});
const LEASE_CLEARED = keys<LeaseClearedReason>({ no_lease: true, ttl_expired: true });
const GUARDIAN = keys<GuardianRoutedReason>({ detected: true, engine_refused: true });
const RETURNED: readonly ReturnedReason[] = RETURNED_REASONS;

/** Each event's kind and the reasons its rows carry (`none`: a row without a reason); every pair starts at zero. */
export const DECISION_EVENTS: Record<DecisionEvent, { kind: DecisionKind; reasons: readonly string[] }> = {
  granted: { kind: 'plan', reasons: [NONE] },
  probe: { kind: 'plan', reasons: [NONE, ...SKIP_REASONS] },
  skipped: { kind: 'plan', reasons: SKIP_REASONS },
  lease_updated: { kind: 'dispatch', reasons: [NONE] },
  lease_cleared: { kind: 'dispatch', reasons: LEASE_CLEARED },
  lease_refused: { kind: 'dispatch', reasons: ['not_an_owner'] },
  lent: { kind: 'dispatch', reasons: [NONE] },
  returned: { kind: 'dispatch', reasons: RETURNED },
  held_for_helper: { kind: 'dispatch', reasons: [NONE] },
  relay_refused: { kind: 'dispatch', reasons: RELAY_REFUSED },
  lent_fate: { kind: 'dispatch', reasons: LENT_FATES },
  guardian_routed: { kind: 'dispatch', reasons: GUARDIAN },
  native_waited_behind_borrowed: { kind: 'helper', reasons: [NONE] },
  borrowed_returned: { kind: 'helper', reasons: BORROWED_RETURNED },
};

const ALL_REASONS = [...new Set(Object.values(DECISION_EVENTS).flatMap((e) => e.reasons))];

/** Cap on distinct node names and on distinct model names per label (then `other`). */
export const NODE_CAP = 64;
export const MODEL_CAP = 256;

const PAIR = ['owner_node', 'owner_model', 'helper_node', 'helper_model'] as const;

type Inc = { inc(): void };
type Observe = { observe(v: number): void };

export class DecisionMetrics {
  private readonly kind = new ClosedLabel(['plan', 'dispatch', 'helper']);
  private readonly event = new ClosedLabel(Object.keys(DECISION_EVENTS));
  private readonly reason = new ClosedLabel(ALL_REASONS);
  private readonly outcome = new ClosedLabel(['granted', 'probe', 'skipped']);
  private readonly nodes = new OpenLabel(NODE_CAP);
  private readonly models = new OpenLabel(MODEL_CAP);

  private readonly all: ChildTree<Inc>;
  private readonly plan: ChildTree<Inc>;
  private readonly lent: ChildTree<Inc>;
  private readonly returned: ChildTree<Inc>;
  private readonly refused: ChildTree<Inc>;
  private readonly fates: ChildTree<Inc>;
  private readonly held: ChildTree<Inc>;
  private readonly handedBack: ChildTree<Inc>;
  private readonly guardian: ChildTree<Inc>;
  private readonly waited: ChildTree<Observe>;

  constructor(registry: Registry) {
    const counter = (name: string, help: string, labels: readonly string[]) => {
      const c = new BoundCounter(name, help, registry);
      return new ChildTree<Inc>(labels, (l) => c.bind(l));
    };
    this.all = counter(
      'routerdesk_decisions_total',
      'Decision-log rows this node wrote, by kind, event and reason (none: no reason)',
      ['kind', 'event', 'reason'],
    );
    for (const [event, e] of Object.entries(DECISION_EVENTS)) for (const r of e.reasons) this.all.get(e.kind, event, r);
    this.plan = counter(
      'routerdesk_lending_plan_rows_total',
      "The master's plan rows per owner-helper pair, by outcome (granted, probe, skipped) and reason",
      [...PAIR, 'outcome', 'reason'],
    );
    this.lent = counter('routerdesk_lending_lent_total', 'Held requests this owner lent to a helper', PAIR);
    this.returned = counter(
      'routerdesk_lending_returned_total',
      'Lent requests that came back to this owner, by reason (cut_off: cut off, HOLD-4)',
      [...PAIR, 'reason'],
    );
    this.refused = counter(
      'routerdesk_lending_relay_refused_total',
      'Lent requests the master could not pass on, by reason (LEASE-8)',
      [...PAIR, 'reason'],
    );
    this.fates = counter(
      'routerdesk_lending_lent_fates_total',
      'Lent requests whose fate was unknown, by how it was resolved (taken_back: taken back from an unreachable helper)',
      [...PAIR, 'reason'],
    );
    this.held = counter(
      'routerdesk_lending_held_for_helper_total',
      'Requests an owner kept waiting for a faster helper (HOLD-1..4)',
      PAIR,
    );
    this.handedBack = counter(
      'routerdesk_lending_borrowed_returned_total',
      'Borrowed requests this helper handed back to their owner, by reason (HELPER-1/3)',
      [...PAIR, 'reason'],
    );
    this.guardian = counter(
      'routerdesk_guardian_routes_total',
      'Image requests for a text-only model sent to its guardian, by reason (GUARD-2)',
      ['model', 'guardian_node', 'guardian_model', 'reason'],
    );
    const waited = new BoundHistogram(
      'routerdesk_lending_native_waited_behind_borrowed_seconds',
      "This node's own requests that waited behind borrowed jobs in their backend, by own model: the wait (LOG-4)",
      [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registry,
    );
    this.waited = new ChildTree<Observe>(['model'], (l) => waited.bind(l));
  }

  /** One decision-log row. */
  count(row: DecisionInput): void {
    const reason = this.reason.fold(row.reason);
    this.all.get(this.kind.fold(row.kind), this.event.fold(row.event), reason).inc();
    const on = this.nodes.fold(row.ownerNode);
    const om = this.models.fold(row.ownerModel);
    const hn = this.nodes.fold(row.helperNode);
    const hm = this.models.fold(row.helperModel);
    switch (row.event) {
      case 'granted':
      case 'probe':
      case 'skipped':
        return this.plan.get(on, om, hn, hm, this.outcome.fold(row.outcome ?? row.event), reason).inc();
      case 'lent':
        return this.lent.get(on, om, hn, hm).inc();
      case 'returned':
        return this.returned.get(on, om, hn, hm, reason).inc();
      case 'relay_refused':
        return this.refused.get(on, om, hn, hm, reason).inc();
      case 'lent_fate':
        return this.fates.get(on, om, hn, hm, reason).inc();
      case 'held_for_helper':
        return this.held.get(on, om, hn, hm).inc();
      case 'borrowed_returned':
        return this.handedBack.get(on, om, hn, hm, reason).inc();
      case 'guardian_routed':
        return this.guardian.get(om, hn, hm, reason).inc();
      case 'native_waited_behind_borrowed':
        return this.waited.get(hm).observe((row.waitedMs ?? 0) / 1000);
      default:
    }
  }

  /** Starts an enrolled model's native-wait histogram empty, so its series exists before the first wait. */
  knownModel(model: string): void {
    this.waited.get(this.models.fold(model));
  }

  /** Starts a pair's lent counter at zero (an owner's configured link), so its series exists before the first lend. */
  knownPair(owner: { nodeId: string; model: string }, helper: { nodeId: string; model: string }): void {
    this.lent.get(
      this.nodes.fold(owner.nodeId),
      this.models.fold(owner.model),
      this.nodes.fold(helper.nodeId),
      this.models.fold(helper.model),
    );
  }
}

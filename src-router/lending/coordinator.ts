import type { FastifyBaseLogger } from 'fastify';
import { type LentFateReason, lentFateRow, planRowToDecision, relayRefusedRow } from './decision-rows';
import { connectRefused } from './master-client';
import { plan } from './planner';
import type { BorrowedAnswer, DecisionSink, RelayAnswer, RelayRequest, WithdrawResult } from './ports';
import {
  type LeaseGrant,
  type LinkSpec,
  type LiveLease,
  type ModelRef,
  type NodeState,
  type PlanResult,
  type PlanSettings,
  refKey,
  type Trigger,
} from './types';

export interface CoordinatorDeps {
  nodeId: string;
  links(): LinkSpec[];
  /** This node's lending state, in-process. */
  localState(): NodeState;
  /** Every other node that takes part (healthy members). */
  remotes(): { nodeId: string; url: string }[];
  /** Polls one remote node (LEASE-3); rejects when it does not answer. */
  pollRemote(url: string): Promise<NodeState>;
  /** Sends a lease (or none) to an owner that did not ask this time (tick, probe_due, another owner's event). */
  pushLease(owner: ModelRef, grant: LeaseGrant | null): void;
  /** Forwards a lent request to a remote helper's worker API, rewritten to the helper's model (LEASE-5). */
  forwardRemote(url: string, req: RelayRequest, signal: AbortSignal): Promise<RelayAnswer>;
  /** Serves a lent request in-process when the helper is this node (LEASE-7). */
  serveLocal(req: RelayRequest, signal: AbortSignal): Promise<RelayAnswer>;
  settings: PlanSettings;
  refreshIntervalMs: number;
  /** cluster.offload_lent_stall_timeout (HELPER-5). */
  stallTimeoutMs: number;
  /** Borrowed jobs the helper says it runs now; null when it cannot say (a build from before this check: busy). Rejects when it does not answer. */
  askBorrowed(helperNodeId: string): Promise<number | null>;
  /**
   * Withdraws lent requests at the helper in one step it cannot race (HOLD-4, HELPER-5): each is `withdrawn` (it will
   * never start there) or `started`. Rejects when the helper does not answer; an id it does not list stays with it.
   */
  withdraw(helperNodeId: string, requestIds: string[]): Promise<Record<string, WithdrawResult>>;
  /** A borrowed request's answer at a remote helper, long-polled up to `waitMs`; rejects when it does not answer. */
  answerOf(helperNodeId: string, requestId: string, waitMs: number): Promise<BorrowedAnswer>;
  /** How long a forward whose fate is unknown waits for the helper's answer (the longer of request and stall time-outs). */
  fateWaitMs: number;
  /** The owner's client left: cancel the borrowed request at its (remote) helper, which does not end it with its relay. */
  cancelAt?(helperNodeId: string, requestIds: string[]): Promise<void>;
  decisions: DecisionSink;
  log: FastifyBaseLogger;
  now?(): number;
}

/**
 * The master's decider (LEASE-2..8): owners report queue events; events coalesce (one decision in flight, at most one
 * queued behind it); each decision polls every node and runs the pure planner; plan rows go to the decision log;
 * owners are answered (or pushed) their lease. Also relays lent requests to helpers, refusing without a live lease.
 */
export class Coordinator {
  private inFlight: Promise<PlanResult> | null = null;
  private queued: Promise<PlanResult> | null = null;
  /** Owners whose events share the queued decision: their answers carry it. */
  private queuedAskers: ModelRef[] = [];
  private readonly live: LiveLeases = new Map();
  private tickTimer?: NodeJS.Timeout;
  private wakeTimer?: NodeJS.Timeout;
  decisionsMade = 0;
  /** Lent requests being relayed, per helper node, and when that set last changed (HELPER-5). */
  private readonly relays = new Map<string, { inflight: Set<AbortController>; lastChange: number }>();
  /** Lent requests being relayed by request id: their helper and how to stop the relay. */
  private readonly byRequest = new Map<string, { helper: string; ctl: AbortController }>();
  private stallTimer?: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(private readonly deps: CoordinatorDeps) {
    this.now = deps.now ?? Date.now;
  }

  start(): void {
    this.tickTimer = setInterval(() => void this.decide('tick').catch(() => {}), this.deps.refreshIntervalMs);
    this.tickTimer.unref();
    this.stallTimer = setInterval(
      () => void this.checkStalls().catch(() => {}),
      Math.max(250, Math.min(10_000, this.deps.stallTimeoutMs / 4)),
    );
    this.stallTimer.unref();
  }

  private stallCheck: Promise<void> | null = null;

  /**
   * HELPER-5: a helper whose lent requests have not changed for the stall timeout is asked whether it still runs
   * borrowed work. Only its definite "none" returns them: every request lent to it is withdrawn there in one step,
   * and each one it confirms comes back to its owner at once. A helper that runs some, cannot say (an older build)
   * or does not answer counts as busy and keeps them. One check at a time.
   */
  checkStalls(): Promise<void> {
    this.stallCheck ??= this.runStallCheck().finally(() => (this.stallCheck = null));
    return this.stallCheck;
  }

  private async runStallCheck(): Promise<void> {
    const now = this.now();
    for (const [helper, r] of this.relays) {
      if (!r.inflight.size || now - r.lastChange < this.deps.stallTimeoutMs) continue;
      const running = await this.deps.askBorrowed(helper).catch((err: Error) => {
        this.deps.log.warn(
          { helper },
          `stall check: helper did not answer (${err.message}); it keeps its lent requests`,
        );
        return null;
      });
      if (running === null || running > 0) {
        r.lastChange = this.now();
        continue;
      }
      const ids = [...this.byRequest].filter(([, b]) => b.helper === helper).map(([id]) => id);
      const back = await this.withdrawAt(helper, ids, 'helper_stalled');
      r.lastChange = this.now();
      if (back) this.deps.log.warn({ helper }, `helper stalled: ${back} lent request(s) return to their owners`);
    }
  }

  /**
   * HEALTH-2: a helper the health polls no longer count as healthy loses its lent requests at once. Whether it runs
   * them is not known, so each goes back to its owner as `unknown`: the owner asks the helper itself before it runs one.
   */
  membersChanged(): void {
    const healthy = new Set(this.deps.remotes().map((r) => r.nodeId));
    for (const r of this.byRequest.values()) {
      if (r.helper === this.deps.nodeId || healthy.has(r.helper) || r.ctl.signal.aborted) continue;
      r.ctl.abort(new Error(UNHEALTHY));
    }
  }

  /** Withdraws lent requests at their helper; those it confirms are stopped here and return to their owners. */
  private async withdrawAt(helper: string, ids: string[], reason: 'cut_off' | 'helper_stalled'): Promise<number> {
    if (ids.length === 0) return 0;
    const answer = await this.deps.withdraw(helper, ids).catch((err: Error) => {
      this.deps.log.warn(
        { helper },
        `withdrawing lent requests: helper did not answer (${err.message}); they stay with it`,
      );
      return {} as Record<string, WithdrawResult>;
    });
    let n = 0;
    for (const id of ids) {
      const r = this.byRequest.get(id);
      if (answer[id] !== 'withdrawn' || !r || r.ctl.signal.aborted) continue;
      r.ctl.abort(new Error(reason));
      n++;
    }
    return n;
  }

  /**
   * The owner's client left while its request was lent (asked by the owner, never inferred from a dropped
   * connection, which may be the relay breaking): the helper stops it, in-process or remote, and its relay ends.
   */
  async cancel(requestId: string): Promise<void> {
    const r = this.byRequest.get(requestId);
    // The owner's relay call usually closes before its cancel arrives: the helper is remembered a little while.
    const helper = r?.helper ?? this.endedRelays.get(requestId);
    if (helper === undefined) return;
    if (helper === this.deps.nodeId) r?.ctl.abort(new Error('cancelled'));
    await this.deps.cancelAt?.(helper, [requestId]);
  }

  /** Helpers of relays that ended lately, by request id (bounded), for cancels that arrive after the relay closed. */
  private readonly endedRelays = new Map<string, string>();

  private rememberEnded(requestId: string, helper: string) {
    this.endedRelays.set(requestId, helper);
    if (this.endedRelays.size > 1000) this.endedRelays.delete(this.endedRelays.keys().next().value!);
  }

  /** HOLD-4: the owner's cut-off time passed; cut the request off only on the helper's word that it has not started it. */
  async cutOff(requestId: string): Promise<boolean> {
    const r = this.byRequest.get(requestId);
    if (!r) return false;
    return (await this.withdrawAt(r.helper, [requestId], 'cut_off')) === 1;
  }

  stop(): void {
    clearInterval(this.tickTimer);
    clearInterval(this.stallTimer);
    clearTimeout(this.wakeTimer);
  }

  /**
   * An owner's event: answered with that owner's lease from a decision that started after the event arrived.
   * `reported`: the owner's state sent with the event (a remote owner); the decision it starts at once
   * takes it instead of polling that node. A decision queued behind another polls: by the time it runs, the owner
   * may have acted on the first one's answer.
   */
  async event(owner: ModelRef, trigger: Trigger, reported?: NodeState): Promise<LeaseGrant | null> {
    const result = await this.decide(trigger, owner, reported?.nodeId === owner.nodeId ? reported : undefined);
    return result.leases.find((l) => refKey(l.owner) === refKey(owner)) ?? null;
  }

  /**
   * Coalesces: at most one decision in flight and one queued behind it; later events share the queued one, and each
   * owner whose event shares it hears it through its answer, not also by a push.
   */
  decide(trigger: Trigger, asker?: ModelRef, reported?: NodeState): Promise<PlanResult> {
    if (!this.inFlight) return this.track(this.run(trigger, asker ? [asker] : [], reported));
    if (asker) this.queuedAskers.push(asker);
    this.queued ??= this.inFlight
      .catch(() => undefined)
      .then(() => {
        this.queued = null;
        const askers = this.queuedAskers;
        this.queuedAskers = [];
        return this.track(this.run(trigger, askers));
      });
    return this.queued;
  }

  /** The decision in flight, cleared when it settles (unless a newer one took its place). */
  private track(p: Promise<PlanResult>): Promise<PlanResult> {
    this.inFlight = p;
    void p
      .catch(() => undefined)
      .then(() => {
        if (this.inFlight === p) this.inFlight = null;
      });
    return p;
  }

  private async run(trigger: Trigger, askers: ModelRef[], reported?: NodeState): Promise<PlanResult> {
    this.decisionsMade++;
    const links = this.deps.links();
    const nodes = await this.snapshot(links, reported);
    const now = this.now();
    dropExpiredLeases(this.live, now);
    const result = plan({ now, trigger, links, nodes, live: [...this.live.values()], settings: this.deps.settings });
    for (const row of result.rows) this.deps.decisions.add(planRowToDecision(row));
    for (const lease of result.leases) {
      const helperState = nodes
        .find((n) => n.nodeId === lease.helper.nodeId)
        ?.models.find((m) => m.model === lease.helper.model);
      lease.helperContextsize = helperState?.contextsize ?? null;
      lease.helperUrl =
        lease.helper.nodeId === this.deps.nodeId
          ? null
          : (this.deps.remotes().find((r) => r.nodeId === lease.helper.nodeId)?.url ?? null);
    }
    keepLiveLeases(this.live, result, now);
    this.push(result, askers);
    this.scheduleWake(result.wakeAt);
    return result;
  }

  /**
   * Every node's state; a node that does not answer takes part as unreachable (its models are not helpers now). A
   * member whose state came with the event (`reported`) is not polled again.
   */
  private async snapshot(links: LinkSpec[], reported?: NodeState): Promise<NodeState[]> {
    const involved = new Set(links.flatMap((l) => [l.owner.nodeId, l.helper.nodeId]));
    const remote = this.deps.remotes().filter((r) => involved.has(r.nodeId));
    const states = await Promise.all(
      remote.map((r) =>
        r.nodeId === reported?.nodeId
          ? reported
          : this.deps.pollRemote(r.url).catch((err: Error): NodeState => {
              this.deps.log.warn({ nodeId: r.nodeId }, `lending poll failed: ${err.message}`);
              return {
                nodeId: r.nodeId,
                reachable: false,
                acceptsBorrowed: false,
                ownIdleMs: 0,
                sinceOwnRequestMs: null,
                lanes: {},
                borrowedInFlight: 0,
                models: [],
              };
            }),
      ),
    );
    return [this.deps.localState(), ...states];
  }

  /**
   * Every owner with held work hears the decision, the askers through their answers, the others by a push: a lease
   * renews its TTL, and "no lease" is re-sent too, since a lost one would leave an owner lending on a lease the
   * master no longer honours.
   */
  private push(result: PlanResult, askers: ModelRef[]) {
    const answers: [ModelRef, LeaseGrant | null][] = [
      ...result.leases.map((l): [ModelRef, LeaseGrant] => [l.owner, l]),
      ...result.noLease.map((o): [ModelRef, null] => [o, null]),
    ];
    const answered = new Set(askers.map(refKey));
    for (const [owner, grant] of answers) {
      if (answered.has(refKey(owner))) continue;
      this.deps.pushLease(owner, grant);
    }
  }

  /** PROBE-4: decide again the moment a helper has idled long enough. */
  private scheduleWake(wakeAt: number | null) {
    clearTimeout(this.wakeTimer);
    if (wakeAt === null) return;
    this.wakeTimer = setTimeout(
      () => void this.decide('probe_due').catch(() => {}),
      Math.max(0, wakeAt - this.now()) + 5,
    );
    this.wakeTimer.unref();
  }

  /** Live leases, for the Lending tab. */
  leases(): LeaseGrant[] {
    const now = this.now();
    return [...this.live.values()].filter((l) => l.expiresAt > now).map((l) => l.grant);
  }

  /** Lent requests being relayed now, per helper node (the master's metrics). */
  relaysByHelper(): Map<string, number> {
    const out = new Map<string, number>();
    for (const r of this.byRequest.values()) out.set(r.helper, (out.get(r.helper) ?? 0) + 1);
    return out;
  }

  /** A lent request from an owner (LEASE-5, LEASE-8): relayed to the helper named by a live lease, else refused. */
  async relay(req: RelayRequest, signal: AbortSignal): Promise<RelayAnswer> {
    const lease = this.live.get(refKey(req.helper));
    const refuse = (
      reason: 'no_live_lease' | 'helper_unreachable' | 'forward_failed',
      message: string,
    ): RelayAnswer => {
      this.deps.decisions.add(
        relayRefusedRow({
          at: this.now(),
          linkId: lease?.grant.linkId ?? null,
          owner: req.owner,
          helper: req.helper,
          requestId: req.requestId,
          reason,
          details: { message },
        }),
      );
      return { kind: 'refused', reason, message };
    };
    if (!lease || lease.expiresAt <= this.now() || refKey(lease.owner) !== refKey(req.owner))
      return refuse('no_live_lease', 'no live lease from this owner to this helper');
    const track = this.relays.get(req.helper.nodeId) ?? {
      inflight: new Set<AbortController>(),
      lastChange: this.now(),
    };
    this.relays.set(req.helper.nodeId, track);
    const stall = new AbortController();
    track.inflight.add(stall);
    track.lastChange = this.now();
    this.byRequest.set(req.requestId, { helper: req.helper.nodeId, ctl: stall });
    signal = AbortSignal.any([signal, stall.signal]);
    try {
      return await this.relayTo(req, signal, refuse);
    } catch (err) {
      if (stall.signal.aborted) {
        const why = (stall.signal.reason as Error)?.message;
        if (why === UNHEALTHY) {
          const message = `helper node '${req.helper.nodeId}' stopped answering the master's health checks while it had the request`;
          this.deps.decisions.add(
            lentFateRow({
              at: this.now(),
              linkId: lease.grant.linkId,
              owner: req.owner,
              helper: req.helper,
              requestId: req.requestId,
              reason: 'unresolved',
              details: { resolvedBy: 'master', cause: message },
            }),
          );
          return { kind: 'unknown', message };
        }
        return { kind: 'returned', reason: why === 'cut_off' ? 'cut_off' : 'helper_stalled' };
      }
      throw err;
    } finally {
      track.inflight.delete(stall);
      this.byRequest.delete(req.requestId);
      this.rememberEnded(req.requestId, req.helper.nodeId);
      track.lastChange = this.now();
    }
  }

  private async relayTo(
    req: RelayRequest,
    signal: AbortSignal,
    refuse: (reason: 'no_live_lease' | 'helper_unreachable' | 'forward_failed', message: string) => RelayAnswer,
  ): Promise<RelayAnswer> {
    const answer =
      req.helper.nodeId === this.deps.nodeId
        ? await this.deps.serveLocal(req, signal)
        : await (async () => {
            const url = this.deps.remotes().find((r) => r.nodeId === req.helper.nodeId)?.url;
            if (!url)
              return {
                kind: 'refused',
                reason: 'helper_unreachable',
                message: `helper node '${req.helper.nodeId}' is not a healthy member`,
              } as RelayAnswer;
            const forwarded = await this.deps.forwardRemote(url, req, signal);
            return forwarded.kind === 'unknown' ? this.resolveFate(req, forwarded.message, signal) : forwarded;
          })();
    if (answer.kind === 'refused') return refuse(answer.reason, answer.message);
    return answer;
  }

  /**
   * A forward that broke off after it may have reached the helper is resolved at the helper before anyone runs it
   * again: withdrawn there (it comes back to the owner, which runs it), or its answer fetched. When the helper cannot
   * be asked (no answer, or its port refuses the master), the fate stays unknown and the owner asks the helper itself.
   * Each resolution is a `lent_fate` row.
   */
  private async resolveFate(req: RelayRequest, message: string, signal: AbortSignal): Promise<RelayAnswer> {
    const helper = req.helper.nodeId;
    const row = (reason: LentFateReason, why?: string) =>
      this.deps.decisions.add(
        lentFateRow({
          at: this.now(),
          linkId: this.live.get(refKey(req.helper))?.grant.linkId ?? null,
          owner: req.owner,
          helper: req.helper,
          requestId: req.requestId,
          reason,
          details: { resolvedBy: 'master', cause: message, ...(why ? { why } : {}) },
        }),
      );
    const unresolved = (why: string): RelayAnswer => {
      row('unresolved', why);
      return { kind: 'unknown', message: `${message}; the master could not resolve it at the helper: ${why}` };
    };
    let state: WithdrawResult | undefined;
    try {
      state = (await this.deps.withdraw(helper, [req.requestId]))[req.requestId];
    } catch (err) {
      // A refused connection does not show the helper is gone when only the master hears it (a firewall that rejects,
      // a route of the master's own): the owner asks the helper too, and takes the request back only if it is refused
      // there as well.
      return unresolved(connectRefused(err) ? 'the helper refuses connections' : (err as Error).message);
    }
    if (state === 'withdrawn') {
      row('withdrawn');
      return { kind: 'returned', reason: 'withdrawn' };
    }
    if (state !== 'started') return unresolved('the helper did not list the request');
    const until = this.now() + this.deps.fateWaitMs;
    while (!signal.aborted && this.now() < until) {
      let a: BorrowedAnswer;
      try {
        a = await this.deps.answerOf(helper, req.requestId, Math.min(20_000, Math.max(0, until - this.now())));
      } catch (err) {
        return unresolved((err as Error).message);
      }
      if (a.state === 'answered') {
        row('answered');
        return { kind: 'answered', status: a.status, body: a.body };
      }
      if (a.state === 'failed') {
        row('failed');
        return { kind: 'refused', reason: 'forward_failed', message: `${message}; it failed at the helper` };
      }
      if (a.state === 'unknown') return unresolved('the helper no longer knows it');
    }
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('relay ended');
    return unresolved('no answer within the request time-out');
  }
}

/** Why a relay was stopped when its helper turned unhealthy. */
const UNHEALTHY = 'helper_unhealthy';

/** The master's live leases, keyed by the helper each claims. */
export type LiveLeases = Map<string, LiveLease & { grant: LeaseGrant }>;

/** Leases whose lifetime has passed are no longer live (before a plan). */
export function dropExpiredLeases(live: LiveLeases, now: number): void {
  for (const [k, l] of live) if (l.expiresAt <= now) live.delete(k);
}

/** After a plan: each granted lease replaces its owner's earlier one; an owner answered "no lease" loses its lease. */
export function keepLiveLeases(live: LiveLeases, result: PlanResult, now: number): void {
  for (const lease of result.leases) {
    for (const [k, l] of live) if (refKey(l.owner) === refKey(lease.owner)) live.delete(k);
    live.set(refKey(lease.helper), {
      owner: lease.owner,
      helper: lease.helper,
      slots: lease.slots,
      probe: lease.probe,
      expiresAt: now + lease.ttlMs,
      grant: lease,
    });
  }
  for (const owner of result.noLease) for (const [k, l] of live) if (refKey(l.owner) === refKey(owner)) live.delete(k);
}

import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { LaneRestorer, type Supervisor } from '../backends';
import type { ClientGone } from '../backends/call-end';
import type { NodeConfig } from '../config';
import { hasImageInput, RouterError } from '../contract';
import {
  expectedAnswerTokens,
  fitFromAnalytics,
  loadCost,
  meanEstimatedTokens,
  type TokenProfile,
  tokenProfile,
} from '../costs';
import { type ItemState, lentEtas, ModelQueue, type QueueItem, queueEtas } from '../queue';
import type { ModelRegistry } from '../registry';
import type { AnalyticsStore } from '../store';
import { lentFateRow, RETURNED_REASONS, type ReturnedReason } from './decision-rows';
import { DropNotices } from './drop-notices';
import type { AdmitRequest, BorrowedTicket, LendingGate, OwnArrival, OwnTicket } from './gate';
import { HelperSide } from './helper-side';
import { lentCutoffAt } from './holds';
import { connectRefused } from './master-client';
import { OwnerSide } from './owner-side';
import type { BorrowedAnswer, DecisionSink, MasterPort, RelayAnswer, WithdrawResult } from './ports';
import {
  type CostFit,
  type LeaseGrant,
  type LendingLane,
  type LinkSpec,
  type ModelRef,
  type ModelState,
  type NodeState,
  refKey,
} from './types';

export interface LendingNodeDeps {
  nodeId: string;
  config: NodeConfig;
  supervisor: Supervisor;
  registry: ModelRegistry;
  analytics: AnalyticsStore;
  decisions: DecisionSink;
  log: FastifyBaseLogger;
  /** Asks a helper directly about lent requests whose relay broke after sending: withdraw them, or fetch an answer. */
  peer?: {
    withdraw(helperUrl: string, requestIds: string[]): Promise<Record<string, WithdrawResult>>;
    answer(helperUrl: string, requestId: string, waitMs: number): Promise<BorrowedAnswer>;
  };
  /** Own-work activity of this node (borrowed work excluded, PROBE-3). */
  activity: { idleMs(): number; sinceOwnRequestMs(): number | null; beginLoad(): () => void };
  now?(): number;
}

const laneOf = (caps: readonly string[]): LendingLane =>
  caps.includes('image') || caps.includes('video') ? 'image' : 'text';

/**
 * Lending on one node: the router queues of its enrolled models, its owner side and helper side, and the
 * snapshot it answers the master's poll with (LEASE-3). Links are the ones this node applied (pushed by the master).
 */
export class LendingNode implements LendingGate {
  private links: LinkSpec[] = [];
  linksVersion = 0;
  private readonly queues = new Map<string, ModelQueue>();
  readonly owner: OwnerSide;
  readonly helper: HelperSide;
  /** HELPER-4 / GUARD-3: what borrowed work and guardian answers displaced comes back once the node is quiet. */
  readonly restorer: LaneRestorer;
  private master?: MasterPort;
  private readonly now: () => number;

  constructor(private readonly deps: LendingNodeDeps) {
    this.now = deps.now ?? Date.now;
    const master: MasterPort = {
      event: (owner, trigger) =>
        this.master ? this.master.event(owner, trigger, () => this.state()) : Promise.resolve(null),
      relay: (req, signal) =>
        this.master
          ? this.master.relay(req, signal)
          : Promise.resolve({ kind: 'refused', reason: 'no_live_lease', message: 'no master' }),
      cutOff: (id) => (this.master ? this.master.cutOff(id) : Promise.resolve(false)),
      cancel: (id) => (this.master ? this.master.cancel(id) : Promise.resolve()),
    };
    this.owner = new OwnerSide({
      nodeId: deps.nodeId,
      master,
      decisions: deps.decisions,
      log: deps.log,
      now: this.now,
      queueOf: (id) => this.queues.get(id),
      isOwner: (id) => this.links.some((l) => l.owner.nodeId === deps.nodeId && l.owner.model === id),
      tokensOf: (id, item) => this.itemTokens(id, item),
      holdEnabled: deps.config.cluster.offload_hold_for_faster_helper,
      deferReport: (fn) => void setImmediate(fn),
    });
    this.restorer = new LaneRestorer({
      supervisor: deps.supervisor,
      delayMs: deps.config.cluster.offload_restore_delay,
      log: deps.log,
      busy: () => this.helper.holdsRestore(),
      ownBusy: () => deps.activity.beginLoad(),
    });
    this.helper = new HelperSide({
      nodeId: deps.nodeId,
      decisions: deps.decisions,
      log: deps.log,
      now: this.now,
      supervisor: deps.supervisor,
      // A broken forward is resolved after the forwarder's own time-out, and waited for up to the stall time-out.
      answerKeepMs:
        Math.max(deps.config.cluster.request_timeout, deps.config.cluster.offload_lent_stall_timeout) + 2 * 60_000,
      queues: () => [...this.queues.values()],
      linkFor: (owner, id) =>
        this.links.find(
          (l) =>
            l.owner.nodeId === owner.nodeId &&
            l.owner.model === owner.model &&
            l.helper.nodeId === deps.nodeId &&
            l.helper.model === id,
        ),
      restorer: this.restorer,
      ownPending: () => this.ownPending,
    });
  }

  /** Aborted while the master is out of reach: relays in flight end as unknown, and new ones end at once. */
  private masterGone = new AbortController();

  /**
   * The master stopped answering this node (its registrations fail): lent requests waiting on their relay stop
   * waiting, and each is resolved at its helper directly, as a relay that broke is — not after the relay's time-out.
   * Until the master answers again, a relay ends at once the same way (its lease runs out meanwhile).
   */
  masterLost(): void {
    if (!this.masterGone.signal.aborted) this.masterGone.abort(new Error('the master stopped answering this node'));
  }

  /** The master answers this node again. */
  masterBack(): void {
    if (this.masterGone.signal.aborted) this.masterGone = new AbortController();
  }

  setMaster(master: MasterPort): void {
    this.master = master;
  }

  /** Applies the links the master pushed (LEASE-1); models leaving every link keep their queue until it drains. */
  applyLinks(version: number, links: LinkSpec[]): void {
    this.links = links;
    this.linksVersion = version;
    for (const id of this.enrolledIds()) if (!this.queues.has(id)) this.queues.set(id, this.newQueue(id));
  }

  appliedLinks(): LinkSpec[] {
    return this.links;
  }

  private enrolledIds(): Set<string> {
    const ids = new Set<string>();
    for (const l of this.links) {
      if (l.owner.nodeId === this.deps.nodeId) ids.add(l.owner.model);
      if (l.helper.nodeId === this.deps.nodeId) ids.add(l.helper.model);
    }
    return new Set([...ids].filter((id) => this.deps.registry.byLocalId(id)));
  }

  private newQueue(localId: string): ModelQueue {
    const queue = new ModelQueue(
      localId,
      this.deps.config.cluster.scheduling_backend_depth,
      (event) => {
        if (event === 'enqueued') this.owner.onQueueEvent(localId, 'enqueued');
        else if (event === 'finished') this.owner.onQueueEvent(localId, 'completed');
        else this.owner.dispatch(localId);
      },
      this.now,
    );
    queue.holdPolicy = (item, firstStartedAt) => this.owner.holdSecond(localId, item, firstStartedAt);
    return queue;
  }

  enrolled(localId: string): boolean {
    return this.enrolledIds().has(localId);
  }

  /** Own requests that arrived and have not yet claimed the runtime (router queue or lane wait alike). */
  private ownPending = 0;

  ownArrived(localId: string, requestId: string, opts: { guardian?: boolean } = {}): OwnArrival {
    this.helper.onOwnArrival({ keepRestores: opts.guardian === true });
    this.ownPending++;
    const arrivedAt = this.now();
    // LOG-4: borrowed jobs already in the backend of this request's runtime (any model on it) when it arrived.
    const borrowedAhead = this.helper.borrowedOnRuntime(localId);
    let pending = true;
    const settle = () => {
      if (!pending) return false;
      pending = false;
      this.ownPending--;
      return true;
    };
    return {
      claimed: () => {
        if (settle()) this.helper.nativeWaited(localId, requestId, borrowedAhead, this.now() - arrivedAt);
      },
      done: () => void settle(),
    };
  }

  /**
   * GUARD-3: a guardian answers here for a text-only model. What the lane of `localId` holds now is loaded back once
   * the node is quiet; the returned function says the answer ended (the quiet period starts again).
   */
  guardianRun(localId: string): () => void {
    this.restorer.remember(localId);
    this.restorer.quietFromNow();
    return () => this.restorer.quietFromNow();
  }

  private item(req: AdmitRequest, borrowed: boolean): QueueItem {
    return {
      id: req.id || randomUUID(),
      arrivedAt: this.now(),
      stream: req.stream,
      bodyBytes: req.bodyBytes,
      work: this.work(req),
      borrowed,
      returned: false,
      state: 'queued',
      imageInput: req.endpoint === 'chat' && hasImageInput(req.json),
    };
  }

  /** The work measure pricing uses: expected tokens for text, pixels × steps × count for images. */
  private work(req: AdmitRequest): number {
    const j = req.json ?? {};
    if (req.endpoint === 'image') {
      const [w, h] =
        typeof j.size === 'string' && /^\d+x\d+$/.test(j.size) ? j.size.split('x').map(Number) : [512, 512];
      return w * h * (typeof j.steps === 'number' ? j.steps : 20) * (typeof j.n === 'number' ? j.n : 1);
    }
    const max =
      typeof j.max_tokens === 'number'
        ? j.max_tokens
        : typeof j.max_completion_tokens === 'number'
          ? j.max_completion_tokens
          : undefined;
    return max ?? 0;
  }

  async admitOwn(localId: string, req: AdmitRequest, client: ClientGone): Promise<OwnTicket> {
    const queue = this.queues.get(localId)!;
    const item = this.item(req, false);
    const owner: ModelRef = { nodeId: this.deps.nodeId, model: localId };
    const enqueued = queue.enqueue(item, client);
    if (req.onWaiting && queue.position(item) !== null) req.onWaiting(() => queue.position(item));
    let dispatch = await enqueued;
    for (;;) {
      const waitedMs = this.now() - item.arrivedAt;
      if (dispatch.kind === 'engine') return { kind: 'engine', waitedMs, done: () => queue.finished(item) };
      if (dispatch.kind === 'returned') throw new Error('own requests are never handed back');
      const lease = dispatch.lease as LeaseGrant;
      // HOLD-4: a helper that has not started answering by 3 × (switch + job) + 30 s is cut off; the owner serves it.
      // The master withdraws it only on the helper's definite word that it has not started it (and then never will).
      const cutoffAt = lentCutoffAt(item.startedAt ?? this.now(), lease);
      const timer =
        cutoffAt === null
          ? undefined
          : setTimeout(() => void this.master!.cutOff(item.id).catch(() => false), Math.max(0, cutoffAt - this.now()));
      timer?.unref();
      let answer: RelayAnswer;
      // The client leaving is said to the helper explicitly: a borrowed request does not end with its relay.
      // A real AbortSignal only now, for the relay: a request that is never lent makes none.
      const signal = client.signal;
      const unlisten = client.onAbort(() => void this.master!.cancel(item.id).catch(() => {}));
      const gone = this.masterGone.signal;
      try {
        answer = await this.master!.relay(
          { requestId: item.id, owner, helper: lease.helper, endpoint: req.endpoint as 'chat', json: req.json ?? {} },
          AbortSignal.any([signal, gone]),
        );
      } catch (err) {
        if (client.aborted || !gone.aborted) throw err;
        answer = { kind: 'unknown', message: (gone.reason as Error).message };
      } finally {
        clearTimeout(timer);
        unlisten();
        queue.lentDone(item);
      }
      if (answer.kind === 'answered') {
        this.owner.onQueueEvent(localId, 'borrowed_completed');
        return {
          kind: 'lent',
          waitedMs,
          status: answer.status,
          body: answer.body,
          helper: lease.helper,
          helperQueueMs: answer.queueMs,
        };
      }
      if (client.aborted) throw Object.assign(new Error('client closed the request'), { name: 'AbortError' });
      if (answer.kind === 'unknown') {
        // Resolved at the helper first: it confirms it will never run it (then it runs here), or its answer is fetched
        // from it. Only a helper that neither the master nor this node can reach loses it: it runs here, and the
        // helper is told to drop it once it answers again.
        const fate = await this.lentFate(lease, item.id, signal);
        this.deps.decisions.add(
          lentFateRow({
            at: this.now(),
            linkId: lease.linkId,
            owner,
            helper: lease.helper,
            requestId: item.id,
            reason: fate.kind,
            details: { resolvedBy: 'owner', cause: answer.message, ...('why' in fate ? { why: fate.why } : {}) },
          }),
        );
        if (fate.kind === 'answered') {
          this.owner.onQueueEvent(localId, 'borrowed_completed');
          return { kind: 'lent', waitedMs, status: fate.status, body: fate.body, helper: lease.helper };
        }
        if (fate.kind === 'lost') {
          throw new RouterError(
            502,
            'lent_answer_lost',
            `the request was lent to node '${lease.helper.nodeId}' and its answer was lost with the relay (${answer.message}; ${fate.why}); it was not run again`,
          );
        }
        this.owner.returned(
          localId,
          item,
          fate.kind === 'withdrawn' ? 'withdrawn' : fate.kind === 'failed' ? 'forward_failed' : 'helper_unreachable',
        );
        dispatch = await queue.requeue(item, client);
        continue;
      }
      this.owner.returned(localId, item, answer.kind === 'refused' ? answer.reason : returnedReason(answer.reason));
      dispatch = await queue.requeue(item, client);
    }
  }

  async admitBorrowed(
    localId: string,
    owner: ModelRef,
    req: AdmitRequest,
    client: ClientGone,
  ): Promise<BorrowedTicket> {
    const queue = this.queues.get(localId)!;
    const item = { ...this.item(req, true), owner: `${owner.nodeId}/${owner.model}` };
    // A relay delivered twice (a retried write) never runs twice: the forwarder resolves its fate as for a broken one.
    if (this.helper.arrivedBefore(item.id)) throw duplicateRequest(item.id);
    const refusal = this.helper.checkArrival(localId, owner, item.id);
    if (refusal) throw offloadReturned(refusal);
    this.helper.admitted(item, localId, owner);
    let d;
    try {
      d = await queue.enqueue(item, client);
    } catch (err) {
      this.helper.borrowedDone(item, localId, owner);
      throw err;
    }
    if (d.kind === 'returned') {
      this.helper.borrowedDone(item, localId, owner);
      throw offloadReturned(d.reason);
    }
    const takeBack = this.helper.claimSignal(item);
    this.helper.beforeBorrowedLoad(localId);
    return {
      waitedMs: this.now() - item.arrivedAt,
      takeBack,
      claimed: () => this.helper.claimed(item),
      done: () => {
        queue.finished(item);
        this.helper.borrowedDone(item, localId, owner);
      },
    };
  }

  /**
   * A lent request whose relay broke after it was sent. Asked of the helper directly (a helper that is the
   * master is asked at the master's URL): `withdrawn` — it never runs there, so it runs here; `helper_gone` — its port
   * refuses this node's connections too, so it is gone with the request, which runs here; `started` — its answer is
   * awaited from the helper, within the longer of the request and stall time-outs (`failed` — it ended there without
   * an answer — runs here); a helper that does not answer is `taken_back` (it runs here, and the helper is told to
   * drop it); one that no longer knows it, or no answer in time, is `lost` (a clear error, never a second run).
   */
  private async lentFate(
    lease: LeaseGrant,
    requestId: string,
    signal: AbortSignal,
  ): Promise<
    | { kind: 'withdrawn' | 'helper_gone' | 'failed' }
    | { kind: 'answered'; status: number; body: unknown }
    | { kind: 'lost' | 'taken_back'; why: string }
  > {
    const url = lease.helperUrl === null ? this.deps.config.cluster.master_url : lease.helperUrl;
    const peer = this.deps.peer;
    if (!url || !peer) return { kind: 'lost', why: 'the helper cannot be asked' };
    const unreachable = (err: unknown, what: string): { kind: 'helper_gone' } | { kind: 'taken_back'; why: string } => {
      if (connectRefused(err)) return { kind: 'helper_gone' };
      this.deps.log.warn(
        { requestId, helper: lease.helper.nodeId },
        `could not ask the helper about a lent request (${what}): ${(err as Error).message}; it runs here`,
      );
      this.drops.add(url, {
        requestId,
        linkId: lease.linkId,
        owner: lease.owner,
        helper: lease.helper,
        at: this.now(),
      });
      return { kind: 'taken_back', why: `${what}, and the helper did not answer: ${(err as Error).message}` };
    };
    let state: WithdrawResult | undefined;
    try {
      state = (await peer.withdraw(url, [requestId]))[requestId];
    } catch (err) {
      return unreachable(err, 'withdrawing it');
    }
    if (state === 'withdrawn') return { kind: 'withdrawn' };
    // A job that started there is waited for as the stall check would (its answer is kept at least that long).
    const until =
      this.now() +
      Math.max(this.deps.config.cluster.request_timeout, this.deps.config.cluster.offload_lent_stall_timeout);
    while (this.now() < until && !signal.aborted) {
      let a: BorrowedAnswer;
      try {
        a = await peer.answer(url, requestId, Math.min(20_000, Math.max(0, until - this.now())));
      } catch (err) {
        return unreachable(err, 'it had started there');
      }
      if (a.state === 'answered') return { kind: 'answered', status: a.status, body: a.body };
      // It ended there without an answer: no longer running anywhere, so it runs here, as the master resolves it.
      if (a.state === 'failed') return { kind: 'failed' };
      if (a.state !== 'running') return { kind: 'lost', why: 'the helper no longer knows it' };
    }
    return { kind: 'lost', why: 'no answer within the request time-out and the stall time-out' };
  }

  borrowedAnswered(requestId: string, answer: { status: number; body: unknown } | null): void {
    this.helper.keepAnswer(requestId, answer);
    this.cancels.delete(requestId);
  }

  /** Borrowed requests' own cancel switches, by request id (bounded: they end with their request). */
  private readonly cancels = new Map<string, AbortController>();

  /** Requests taken back from a helper no one could reach: the helper is told to drop them when it answers again. */
  private readonly drops = new DropNotices({
    withdraw: (url, ids) => this.deps.peer!.withdraw(url, ids),
    told: (t, result) => {
      this.deps.decisions.add(
        lentFateRow({
          at: this.now(),
          linkId: t.linkId,
          owner: t.owner,
          helper: t.helper,
          requestId: t.requestId,
          reason: result === 'withdrawn' ? 'dropped' : 'started_twice',
          details: { resolvedBy: 'owner' },
        }),
      );
      if (result === 'started')
        this.deps.log.warn(
          { requestId: t.requestId, helper: t.helper.nodeId },
          'a request taken back from a helper no one could reach had started there too: it ran twice',
        );
    },
    now: () => this.now(),
  });

  /**
   * The signal a borrowed request runs under: not its relay connection, but an explicit cancel (cancelBorrowed); one
   * cancelled before it arrived runs under an aborted signal, so no engine starts it.
   */
  borrowedSignal(requestId: string): AbortSignal {
    if (this.helper.takeCancelled(requestId)) return AbortSignal.abort(new Error('cancelled'));
    const ctl = this.cancels.get(requestId) ?? new AbortController();
    this.cancels.set(requestId, ctl);
    return ctl.signal;
  }

  /**
   * The owner's client left: the master cancels the borrowed requests it relayed here. One not here yet is remembered
   * as withdrawn ids are (HelperSide) and stopped when it arrives; all count as cancelled.
   */
  cancelBorrowed(requestIds: string[]): number {
    for (const id of requestIds) {
      const ctl = this.cancels.get(id);
      if (ctl) {
        ctl.abort();
        this.cancels.delete(id);
        continue;
      }
      this.helper.cancelledBeforeArrival(id);
    }
    return requestIds.length;
  }

  /** HOLD-4 / HELPER-5: the master withdraws lent requests from this helper (see HelperSide.withdraw). */
  withdraw(requestIds: string[]) {
    return this.helper.withdraw(requestIds);
  }

  /** Pricing work of a held request: expected answer tokens for text (its max_tokens, else the measured mean), pixels × steps × count for images. */
  private workOf(lane: LendingLane, item: QueueItem, profile: TokenProfile | null): number {
    if (lane === 'image') return item.work;
    return expectedAnswerTokens(profile, item.work || undefined) ?? item.work;
  }

  /** LLM-2/3: estimated tokens of one request, or null without a token profile. */
  private itemTokens(localId: string, item: QueueItem): number | null {
    const profile = this.tokenProfile(localId);
    return meanEstimatedTokens(
      [{ bodyBytes: item.bodyBytes, maxTokens: item.work || undefined }],
      profile,
      this.deps.config.cluster.scheduling_context_reserve,
    );
  }

  private readonly fits = new Map<string, { at: number; dirty: boolean; fit: CostFit | null; loadMs: number | null }>();

  /** A request or load of this model was recorded: its fit is recomputed at the next poll (at most every 50 ms). */
  noteRecorded(localId: string): void {
    const cached = this.fits.get(localId);
    if (cached) cached.dirty = true;
  }

  /**
   * A model's fit (PRICE-2) and load cost (PRICE-4) from its analytics, kept until a new request or load of the
   * model is recorded (then recomputed at most every 50 ms, and at least every 5 s as the window slides): the
   * master polls on every queue event, and a burst must not turn each poll into a scan of the model's history.
   */
  private costs(localId: string, lane: LendingLane): { fit: CostFit | null; loadMs: number | null } {
    const cached = this.fits.get(localId);
    const now = this.now();
    if (cached && now - cached.at < (cached.dirty ? 50 : 5000)) return cached;
    const c = this.deps.config.cluster;
    const rows = this.deps.analytics.requestsForLocal(localId, now - c.scheduling_sample_window);
    const entry = {
      at: now,
      dirty: false,
      fit: fitFromAnalytics(rows, {
        now,
        windowMs: c.scheduling_sample_window,
        minSamples: c.scheduling_min_samples,
        lane,
      }),
      loadMs: loadCost(this.deps.analytics.loadsFor(localId)),
    };
    this.fits.set(localId, entry);
    return entry;
  }

  private readonly profiles = new Map<string, { at: number; profile: TokenProfile | null }>();

  /** The model's token profile, recomputed at most once a second (dispatch asks per held request). */
  private tokenProfile(localId: string): TokenProfile | null {
    const cached = this.profiles.get(localId);
    if (cached && this.now() - cached.at < 1000) return cached.profile;
    const profile = this.computeTokenProfile(localId);
    this.profiles.set(localId, { at: this.now(), profile });
    return profile;
  }

  private computeTokenProfile(localId: string): TokenProfile | null {
    const c = this.deps.config.cluster;
    const rows = this.deps.analytics.requestsForLocal(localId, this.now() - c.scheduling_sample_window);
    return tokenProfile(
      rows
        .filter((r) => r.outcome === 'ok' && r.promptBytes && r.promptTokens)
        .map((r) => ({
          bodyBytes: r.promptBytes!,
          promptTokens: r.promptTokens!,
          answerTokens: r.tokensGenerated ?? null,
        })),
      c.scheduling_min_samples,
    );
  }

  /** This node as the planner sees it (LEASE-3): queues, whether it accepts borrowed work, idle time, fitted costs. */
  state(): NodeState {
    const c = this.deps.config.cluster;
    const now = this.now();
    const lanes = this.deps.supervisor.laneStatus();
    const models: ModelState[] = [];
    for (const id of this.enrolledIds()) {
      const rec = this.deps.registry.byLocalId(id)!;
      const queue = this.queues.get(id);
      const lane = laneOf(rec.config.capabilities);
      const lendable = queue?.lendable() ?? [];
      const profile = lane === 'text' ? this.tokenProfile(id) : null;
      const contextsize = rec.config.contextsize ?? rec.config.vllm?.settings.max_model_length ?? null;
      const parallel = Math.max(rec.config.parallel ?? 1, rec.config.vllm?.settings.max_number_sequences ?? 1);
      models.push({
        model: id,
        lane,
        runtimeLane: this.deps.supervisor.adapter(id).lane,
        loaded: this.deps.supervisor.modelLoad(id).loaded,
        held: lendable.length,
        heldWork: lendable.map((i) => this.workOf(lane, i, profile)),
        pinnedWork: (queue?.view().waiting ?? [])
          .filter((i) => !i.borrowed && !lendable.includes(i))
          .map((i) => this.workOf(lane, i, profile)),
        active: queue?.activeCount ?? 0,
        lentOut: queue?.lentCount ?? 0,
        borrowedWaiting: queue?.borrowedWaiting() ?? 0,
        ...pick(this.costs(id, lane)),
        contextsize,
        eligible: lane === 'image' || (parallel <= 1 && contextsize !== null),
        multimodal: rec.config.capabilities.includes('multimodal'),
        meanHeldTokens:
          lane === 'text'
            ? meanEstimatedTokens(
                lendable.map((i) => ({ bodyBytes: i.bodyBytes, maxTokens: i.work || undefined })),
                profile,
                c.scheduling_context_reserve,
              )
            : null,
      });
    }
    // Models that hold a runtime lane without being linked still price a displacement (PRICE-5/6): list them too.
    for (const l of lanes) {
      if (!l.loaded || models.some((m) => m.model === l.loaded)) continue;
      const rec = this.deps.registry.byLocalId(l.loaded);
      if (!rec) continue;
      models.push({
        model: rec.localId,
        lane: laneOf(rec.config.capabilities),
        runtimeLane: l.lane,
        loaded: l.state === 'ready',
        held: 0,
        heldWork: [],
        active: l.inflight,
        lentOut: 0,
        fit: null,
        loadMs: this.costs(rec.localId, laneOf(rec.config.capabilities)).loadMs,
        contextsize: rec.config.contextsize ?? null,
        eligible: false,
        multimodal: rec.config.capabilities.includes('multimodal'),
        meanHeldTokens: null,
      });
    }
    return {
      nodeId: this.deps.nodeId,
      reachable: true,
      acceptsBorrowed: this.helper.acceptsBorrowed(),
      ownIdleMs: this.deps.activity.idleMs(),
      sinceOwnRequestMs: this.deps.activity.sinceOwnRequestMs(),
      lanes: Object.fromEntries(lanes.map((l) => [l.lane, l.state === 'ready' ? l.loaded : null])),
      borrowedInFlight: this.helper.borrowedInFlight(),
      models,
    };
  }

  /** Requests in each enrolled model's router queue by state and origin (the node's metrics; no request ids). */
  queueCounts(): { model: string; own: Record<ItemState, number>; borrowed: Record<ItemState, number> }[] {
    return [...this.queues.values()].map((q) => {
      const own = { queued: 0, held: 0, lent: 0, active: 0 };
      const borrowed = { queued: 0, held: 0, lent: 0, active: 0 };
      const v = q.view();
      for (const i of [...v.waiting, ...v.active, ...v.lent]) (i.borrowed ? borrowed : own)[i.state]++;
      return { model: q.localId, own, borrowed };
    });
  }

  /** Each configured model's fitted cost (PRICE-2) and mean load time (PRICE-4), as the master is told them. */
  costFigures(): { model: string; fit: CostFit | null; loadMs: number | null }[] {
    return this.deps.registry
      .all()
      .map((r) => ({ model: r.localId, ...pick(this.costs(r.localId, laneOf(r.config.capabilities))) }));
  }

  /** Requests of enrolled models at their engine, for the Nodes page's active requests (UI-2, `cluster/active-requests`). */
  activeItems() {
    return [...this.queues.values()].flatMap((q) =>
      q.view().active.map((i) => ({
        model: q.localId,
        id: i.id,
        stream: i.stream,
        startedAt: i.startedAt ?? i.arrivedAt,
        owner: i.owner,
      })),
    );
  }

  /**
   * Held requests for the Nodes page (UI-2): queued / held / lent with first arrival; a waiting one with its position
   * and predicted start and finish, a lent one with its helper and predicted finish there (`queue/queue-eta`).
   */
  heldView() {
    const now = this.now();
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    return [...this.queues.values()].map((q) => {
      const v = q.view();
      const row = (i: QueueItem) => ({
        id: i.id,
        state: i.state,
        firstArrival: new Date(i.arrivedAt).toISOString(),
        borrowed: i.borrowed,
        returned: i.returned,
        stream: i.stream,
      });
      const rec = this.deps.registry.byLocalId(q.localId);
      const lane = laneOf(rec?.config.capabilities ?? []);
      const profile = lane === 'text' ? this.tokenProfile(q.localId) : null;
      const work = (i: QueueItem) => this.workOf(lane, i, profile);
      const etas = queueEtas({
        now,
        fit: this.costs(q.localId, lane).fit,
        active: v.active.map((i) => ({ startedAt: i.startedAt ?? i.arrivedAt, work: work(i) })),
        waiting: v.waiting.map(work),
      });
      const lentAt = lentEtas(
        v.lent.map((i) => ({
          sentAt: i.startedAt ?? now,
          helper: i.lentTo?.helper ?? '',
          helperJobMs: i.lentTo?.helperJobMs ?? null,
          helperSwitchMs: i.lentTo?.helperSwitchMs ?? null,
        })),
      );
      return {
        model: q.localId,
        depth: v.depth,
        active: v.active.map(row),
        held: [
          ...v.waiting.map((i, k) => ({
            ...row(i),
            position: etas[k].position,
            predictedStart: iso(etas[k].startAt),
            predictedFinish: iso(etas[k].finishAt),
            helper: null,
          })),
          ...v.lent.map((i, k) => ({
            ...row(i),
            position: null,
            predictedStart: null,
            predictedFinish: iso(lentAt[k]),
            helper: i.lentTo?.helper ?? null,
          })),
        ],
      };
    });
  }

  stop(): void {
    this.owner.stop();
    this.helper.stop();
    this.drops.stop();
  }
}

export const duplicateRequest = (requestId: string) =>
  new RouterError(
    409,
    'duplicate_request',
    `borrowed request '${requestId}' already arrived here: it is not run again (ask for its answer)`,
    'invalid_request_error',
    'x-routerdesk-request-id',
  );

export const offloadReturned = (reason: string) =>
  new RouterError(
    409,
    'offload_returned',
    `borrowed request handed back to its owner (${reason})`,
    'invalid_request_error',
    null,
    { reason },
  );

export { refKey };

/** A helper's or the master's hand-back reason as the owner logs it (an unknown one from another build: `withdrawn`). */
function returnedReason(reason: string): ReturnedReason {
  return ((RETURNED_REASONS as readonly string[]).includes(reason) ? reason : 'withdrawn') as ReturnedReason;
}

/** The snapshot's cost fields of a cached entry (the cache's own bookkeeping stays out of the wire object). */
const pick = ({ fit, loadMs }: { fit: CostFit | null; loadMs: number | null }) => ({ fit, loadMs });

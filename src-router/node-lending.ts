import type { FastifyBaseLogger } from 'fastify';
import type { Supervisor } from './backends';
import { goneOf } from './backends/call-end';
import type { ActivityTracker } from './cluster/activity';
import { boundLendingState } from './cluster/member-bounds';
import type { Membership } from './cluster/membership';
import { newEpoch, pushToSlaves } from './cluster/settings-push';
import type { NodeConfig } from './config';
import { borrowedAnswerSchema, type LinksPush, lendingNodeStateSchema, peerRead, RouterError } from './contract';
import { Coordinator } from './lending/coordinator';
import { LendingNode } from './lending/lending-node';
import { LinkStore } from './lending/links';
import { answerAt, callPeer, forwardToHelper, leaseAt, masterClient, withdrawAt } from './lending/master-client';
import type { RelayAnswer, RelayRequest } from './lending/ports';
import { SerialReads } from './lending/serial-reads';
import type { LeaseGrant, ModelRef, NodeState } from './lending/types';
import type { ModelRegistry } from './registry';
import type { RequestExecutor } from './serve';
import type { AnalyticsStore, Db, DecisionLogWriter } from './store';

export interface LendingWiringDeps {
  config: NodeConfig;
  db: Db;
  registry: ModelRegistry;
  supervisor: Supervisor;
  analytics: AnalyticsStore;
  activity: ActivityTracker;
  decisions: DecisionLogWriter;
  executor: RequestExecutor;
  log: FastifyBaseLogger;
  membership?: Membership;
}

/** Lending on this node: queues, owner and helper sides; on the master also the decider, the relay and link pushes. */
export function createLendingWiring(d: LendingWiringDeps) {
  const { config } = d;
  const c = config.cluster;
  const token = c.token;
  const nodeId = c.node_id;
  const links = new LinkStore(d.db);
  // A node's clock may run ahead of or behind its peers; ROUTERDESK_CLOCK_OFFSET_MS shifts this node's lending clock
  // (tests use it to show that an owner times its lease on its own clock, LEASE-6).
  const offset = Number(process.env.ROUTERDESK_CLOCK_OFFSET_MS ?? 0) || 0;
  const now = () => Date.now() + offset;
  const lending = new LendingNode({
    nodeId,
    config,
    supervisor: d.supervisor,
    registry: d.registry,
    analytics: d.analytics,
    decisions: d.decisions,
    log: d.log,
    now,
    peer: {
      withdraw: (url, ids) => withdrawAt(url, token, ids),
      answer: (url, id, waitMs) => answerAt(url, token, id, waitMs),
    },
    activity: {
      idleMs: () => d.activity.idleMs(),
      sinceOwnRequestMs: () => d.activity.sinceOwnRequestMs(),
      beginLoad: () => d.activity.beginLoad(),
    },
  });
  lending.applyLinks(links.version(), links.toSpecs());

  /** LEASE-7: the master serves a lent request in-process when it is the helper. */
  // The master as helper runs a borrowed job as a remote helper does: under an explicit cancel, not its relay, so a
  // relay that breaks mid-job leaves the job running and its answer kept for the owner to fetch.
  const serveLocal = async (req: RelayRequest, signal: AbortSignal): Promise<RelayAnswer> => {
    try {
      const job = d.executor.run({
        endpoint: req.endpoint,
        model: req.helper.model,
        json: { ...req.json, model: req.helper.model, stream: false },
        stream: false,
        client: goneOf(lending.borrowedSignal(req.requestId)),
        worker: true,
        borrowedFrom: req.owner,
        requestId: req.requestId,
      });
      const out = await untilAborted(job, signal);
      if (out.kind !== 'json' || out.status >= 400)
        return { kind: 'refused', reason: 'forward_failed', message: `helper answered ${out.status}` };
      return {
        kind: 'answered',
        status: out.status,
        body: out.body,
        ...(out.facts?.queueMs != null ? { queueMs: out.facts.queueMs } : {}),
      };
    } catch (err) {
      if (err instanceof RouterError && err.code === 'offload_returned')
        return { kind: 'returned', reason: err.extra.reason ?? 'returned' };
      if (signal.aborted) throw err;
      return { kind: 'refused', reason: 'forward_failed', message: (err as Error).message };
    }
  };

  let coordinator: Coordinator | undefined;
  const remotes = () => d.membership?.statusCapable() ?? [];
  /** What was last said of each member's lending state past the member bounds: said again only when it changes. */
  const stateWarnings = new Map<string, string>();
  if (c.role === 'master') {
    coordinator = new Coordinator({
      nodeId,
      links: () => links.toSpecs(),
      localState: () => lending.state(),
      remotes,
      pollRemote: async (url) => {
        const { res, json } = await callPeer(`${url}/router/v1/node/offload/state`, token, undefined, 2_000);
        if (!res.ok) throw new Error(`${res.status}`);
        const state = peerRead(lendingNodeStateSchema).safeParse(json);
        if (!state.success)
          throw new Error(
            `unreadable lending state: ${state.error.issues[0]?.path.join('.') || '(root)'}: ${state.error.issues[0]?.message}`,
          );
        const bounded = boundLendingState(state.data);
        const said = bounded.warnings.join('; ');
        if ((stateWarnings.get(url) ?? '') !== said) {
          if (said) d.log.warn({ url }, `member's lending state not all taken: ${said}`);
          stateWarnings.set(url, said);
        }
        return bounded.state as NodeState;
      },
      pushLease: (owner: ModelRef, grant: LeaseGrant | null) => {
        if (owner.nodeId === nodeId) return lending.owner.apply(owner.model, grant);
        const url = remotes().find((r) => r.nodeId === owner.nodeId)?.url;
        if (!url) return;
        void callPeer(`${url}/router/v1/node/offload/lease`, token, { owner, lease: grant }, 2_000).catch(
          (err: Error) => d.log.warn({ nodeId: owner.nodeId }, `lease push failed: ${err.message}`),
        );
      },
      forwardRemote: (url, req, signal) => forwardToHelper(url, token, req, signal, c.request_timeout),
      serveLocal,
      settings: {
        probeIdleMs: c.offload_probe_idle,
        switchProbeFactor: 12,
        leaseTtlMs: Math.max(3 * c.scheduling_refresh_interval, 5_000),
      },
      refreshIntervalMs: c.scheduling_refresh_interval,
      stallTimeoutMs: c.offload_lent_stall_timeout,
      withdraw: async (helper, requestIds) => {
        if (helper === nodeId) return lending.withdraw(requestIds);
        const url = remotes().find((r) => r.nodeId === helper)?.url;
        if (!url) throw new Error(`helper node '${helper}' is not a healthy member`);
        return withdrawAt(url, token, requestIds);
      },
      answerOf: async (helper, requestId, waitMs) => {
        if (helper === nodeId) return lending.helper.answerOf(requestId, waitMs);
        const url = remotes().find((r) => r.nodeId === helper)?.url;
        if (!url) throw new Error(`helper node '${helper}' is not a healthy member`);
        return answerAt(url, token, requestId, waitMs);
      },
      fateWaitMs: Math.max(c.request_timeout, c.offload_lent_stall_timeout),
      cancelAt: async (helper, requestIds) => {
        if (helper === nodeId) return void lending.cancelBorrowed(requestIds);
        const url = remotes().find((r) => r.nodeId === helper)?.url;
        if (!url) return;
        await callPeer(`${url}/router/v1/node/offload/cancel`, token, { requestIds }, 3_000);
      },
      askBorrowed: async (helper) => {
        if (helper === nodeId) return lending.helper.borrowedInFlight();
        const url = remotes().find((r) => r.nodeId === helper)?.url;
        if (!url) throw new Error(`helper node '${helper}' is not a healthy member`);
        const { res, json } = await callPeer(`${url}/router/v1/node/offload/borrowed`, token, undefined, 3_000);
        if (res.status === 404) return null;
        if (!res.ok) throw new Error(`${res.status}`);
        return peerRead(borrowedAnswerSchema).parse(json).running;
      },
      decisions: d.decisions,
      log: d.log,
      now,
    });
    lending.setMaster({
      event: (o, t) => coordinator!.event(o, t),
      relay: (r, s) => coordinator!.relay(r, s),
      cutOff: (id) => coordinator!.cutOff(id),
      cancel: (id) => coordinator!.cancel(id),
    });
  } else if (c.role === 'slave') {
    lending.setMaster(masterClient(c.master_url!, token, { eventTimeoutMs: 5_000, relayTimeoutMs: c.request_timeout }));
  }

  /** LEASE-1: the master pushes its links to every healthy slave (after a change, and when membership changes). */
  const epoch = newEpoch(nodeId);
  const linksNow = (): LinksPush => ({ version: links.version(), epoch, links: links.toSpecs() });
  const pushLinks = () => {
    if (c.role !== 'master') return;
    const body = linksNow();
    pushToSlaves(remotes(), '/router/v1/node/links', token, () => body, d.log, 'link');
  };
  /** On a slave: the master's run and version it applied last. */
  let applied = '';
  /** On a slave: the master's lease of an owner model, keyed `[nodeId, model]`. */
  const leaseReads = new SerialReads<LeaseGrant | null>((key) => {
    const [nodeId, model] = JSON.parse(key) as [string, string];
    return leaseAt(c.master_url!, token, { nodeId, model });
  });

  return {
    lending,
    links,
    coordinator,
    pushLinks,
    /** Membership changed (a member turned healthy or unhealthy): relays to a helper that is no longer healthy end. */
    membersChanged: () => coordinator?.membersChanged(),
    /** The links the master runs (its push, and the answer to a slave's read). */
    linksNow,
    /** After a site API change on the master: apply here and push everywhere. */
    linksChanged(): void {
      lending.applyLinks(links.version(), links.toSpecs());
      pushLinks();
    },
    /** A slave applies the links it read from its configured master, and keeps them for its next start; false: unchanged. */
    applyPulled(p: LinksPush): boolean {
      const key = `${p.epoch ?? ''}#${p.version}`;
      if (key === applied) return false;
      applied = key;
      links.replaceAll(p.version, p.links);
      lending.applyLinks(p.version, p.links);
      return true;
    },
    /**
     * A slave's check of a pushed lease: the lease its configured master holds for that owner now, one read at a time
     * per owner model (anyone with the cluster token can push).
     */
    masterLease: (owner: ModelRef): Promise<LeaseGrant | null> =>
      leaseReads.get(JSON.stringify([owner.nodeId, owner.model])),
    start(): void {
      coordinator?.start();
    },
    stop(): void {
      coordinator?.stop();
      lending.stop();
    },
  };
}

export type LendingWiring = ReturnType<typeof createLendingWiring>;

/** `job`'s result, or a rejection as soon as `signal` aborts (the job itself goes on; its own failure is then ignored). */
function untilAborted<T>(job: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    job.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const stop = () => {
      job.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener('abort', stop, { once: true });
    job.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

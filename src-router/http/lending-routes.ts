import { isDeepStrictEqual } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { lendingView } from '../cluster/lending-view';
import {
  cutoffRequestSchema,
  leasePushRequestSchema,
  linksPushSchema,
  offloadEventRequestSchema,
  QUEUE_MS_HEADER,
  RouterError,
  relayRequestSchema,
  withdrawRequestSchema,
} from '../contract';
import type { Coordinator } from '../lending/coordinator';
import type { LendingNode } from '../lending/lending-node';
import type { LinkStore } from '../lending/links';
import type { LeaseGrant, NodeState } from '../lending/types';
import { allowRoles, requireToken } from './auth';
import type { HttpDeps } from './deps';
import { parsePeerBody } from './errors';
import { nudgedByPush } from './settings-nudge';

export interface LendingHttp {
  lending: LendingNode;
  links: LinkStore;
  /** After a site API change: apply here and push to every slave (LEASE-1). */
  linksChanged(): void;
  /** The decider, on the master only. */
  coordinator?: Coordinator;
  /** On a slave: the lease its configured master holds now for a model of this node (a pushed lease is checked against it). */
  masterLease(owner: { nodeId: string; model: string }): Promise<LeaseGrant | null>;
}

/** The node API of lending (cluster token): events and relay on the master, state, lease and link pushes on every node. */
export async function lendingRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  const l = deps.lendingHttp;
  const master = () => {
    if (!l.coordinator)
      throw new RouterError(
        404,
        'not_a_master',
        `node '${deps.nodeId}' is a ${deps.role}, not a master: it makes no lending decisions`,
      );
    return l.coordinator;
  };
  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken(deps.clusterToken, 'cluster'));

    scope.post('/router/v1/node/offload/event', async (request) => {
      const { owner, trigger, state } = parsePeerBody(offloadEventRequestSchema, request.body);
      return { lease: await master().event(owner, trigger, state as NodeState | undefined) };
    });

    scope.post('/router/v1/node/offload/relay', async (request, reply) => {
      const req = parsePeerBody(relayRequestSchema, request.body);
      const ctl = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) ctl.abort();
      });
      const answer = await master().relay(req, ctl.signal);
      // The helper's wait goes as a header; the body stays what older owners parse strictly.
      if (answer.kind !== 'answered' || answer.queueMs === undefined) return answer;
      const { queueMs, ...body } = answer;
      reply.header(QUEUE_MS_HEADER, String(Math.round(queueMs)));
      return body;
    });

    // Asked by the master of its slaves (its own state it reads in-process).
    scope.get('/router/v1/node/offload/state', async () => {
      allowRoles(deps.role, ['slave'], 'lending state polls');
      return l.lending.state();
    });

    // HELPER-5: the master asks a helper that looks stalled whether it still runs borrowed work.
    scope.get('/router/v1/node/offload/borrowed', async () => {
      allowRoles(deps.role, ['slave'], 'stall checks');
      return { running: l.lending.helper.borrowedInFlight() };
    });

    // HOLD-4 / HELPER-5, asked by the master: withdraw lent requests in one step (each withdrawn or started).
    scope.post('/router/v1/node/offload/withdraw', async (request) => {
      // A slave helper (asked by the master), or the master as helper (asked by an owner whose relay broke).
      allowRoles(deps.role, ['slave', 'master'], 'withdrawals');
      const { requestIds } = parsePeerBody(withdrawRequestSchema, request.body);
      return { results: l.lending.withdraw(requestIds) };
    });

    // An owner whose client left asks the master, which asks the helper: borrowed requests do not end
    // with their relay connection, so their cancel is said explicitly.
    scope.post('/router/v1/node/offload/cancel', async (request) => {
      const { requestIds } = parsePeerBody(withdrawRequestSchema, request.body);
      if (deps.role === 'master') {
        await Promise.all(requestIds.map((id) => master().cancel(id)));
        return { cancelled: requestIds.length };
      }
      allowRoles(deps.role, ['slave'], 'cancels of borrowed requests');
      return { cancelled: l.lending.cancelBorrowed(requestIds) };
    });

    // An owner whose relay broke after sending fetches a started borrowed request's answer here.
    scope.get<{ Querystring: { request?: string; wait?: string } }>(
      '/router/v1/node/offload/answer',
      async (request) => {
        allowRoles(deps.role, ['slave', 'master'], 'answers of borrowed requests');
        const { request: id, wait } = request.query;
        if (typeof id !== 'string' || !id || id.length > 200)
          throw new RouterError(
            400,
            'invalid_request',
            'request: the lent request id',
            'invalid_request_error',
            'request',
          );
        const waitMs = wait === undefined ? 0 : /^\d{1,6}$/.test(wait) ? Math.min(Number(wait), 30_000) : NaN;
        if (Number.isNaN(waitMs))
          throw new RouterError(
            400,
            'invalid_request',
            'wait: milliseconds, 0 to 30000',
            'invalid_request_error',
            'wait',
          );
        return l.lending.helper.answerOf(id, waitMs);
      },
    );

    // HOLD-4, asked by an owner whose lent request is overdue: cut off only if its helper has not started it.
    scope.post('/router/v1/node/offload/cutoff', async (request) => {
      const { requestId } = parsePeerBody(cutoffRequestSchema, request.body);
      return { cut: await master().cutOff(requestId) };
    });

    // A pushed lease is applied only as the master at `cluster.master_url` holds it now: anyone with the cluster
    // token can send one, and its helper, slots and TTL would steer this node's lending.
    scope.post('/router/v1/node/offload/lease', async (request) => {
      allowRoles(deps.role, ['slave'], 'lease pushes');
      const { owner, lease } = parsePeerBody(leasePushRequestSchema, request.body);
      if (owner.nodeId !== deps.nodeId)
        throw new RouterError(400, 'wrong_node', `lease for node '${owner.nodeId}' sent to '${deps.nodeId}'`);
      if (lease && (lease.owner.nodeId !== owner.nodeId || lease.owner.model !== owner.model))
        throw new RouterError(
          400,
          'invalid_lease',
          'lease.owner must be the owner the push names',
          'invalid_request_error',
          'lease.owner',
        );
      const held = await l.masterLease(owner).catch((err: Error) => {
        throw new RouterError(502, 'master_unreachable', `lease not checked with the master: ${err.message}`);
      });
      const ignored = !isDeepStrictEqual(lease, held);
      if (ignored)
        request.log.warn(
          { owner, pushed: lease, master: held },
          "lease push ignored: it is not the lease the master holds; the master's applied",
        );
      const applied = l.lending.owner.apply(owner.model, held as Parameters<typeof l.lending.owner.apply>[1]);
      return {
        ...(applied ? { applied: true } : { applied: false, reason: 'not_an_owner' }),
        ...(ignored ? { ignored: true } : {}),
      };
    });

    // Asked by a slave of its master: the lease it holds now for one owner (null: none).
    scope.get<{ Querystring: { node?: string; model?: string } }>('/router/v1/node/offload/lease', async (request) => {
      allowRoles(deps.role, ['master'], 'lease reads');
      const { node, model } = request.query;
      if (typeof node !== 'string' || !node || typeof model !== 'string' || !model)
        throw new RouterError(
          400,
          'invalid_request',
          'node and model: the owner whose lease is asked',
          'invalid_request_error',
          node ? 'model' : 'node',
        );
      return {
        lease:
          master()
            .leases()
            .find((g) => g.owner.nodeId === node && g.owner.model === model) ?? null,
      };
    });

    scope.post('/router/v1/node/links', async (request) => {
      // Links are the master's to decide (LEASE-1): it never takes them from a peer, and a slave reads them from its master.
      allowRoles(deps.role, ['slave'], 'link pushes');
      return nudgedByPush(deps, request, 'links', parsePeerBody(linksPushSchema, request.body));
    });

    scope.get('/router/v1/node/held', async () => ({ nodeId: deps.nodeId, models: l.lending.heldView() }));
    scope.get('/router/v1/node/active', async () => ({ nodeId: deps.nodeId, requests: deps.activeRequests() }));
  });

  // The Lending tab and the Nodes page (UI-1, UI-2): live leases, settings, each node's build and whether it runs
  // the master's settings, and every node's held requests marked queued / held / lent with first arrival.
  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken([deps.consoleToken, ...deps.operators], 'console'));
    scope.get('/router/v1/console/lending', async (request) =>
      lendingView({
        nodeId: deps.nodeId,
        version: deps.version,
        settingsHash: deps.snapshot().settingsHash,
        linksVersion: l.lending.linksVersion,
        guardiansVersion: deps.guardians.version(),
        clusterToken: deps.clusterToken,
        localHeld: () => l.lending.heldView(),
        localActive: () => deps.activeRequests(),
        members: () => deps.membership?.statusCapable() ?? [],
        memberViews: () => deps.membership?.views() ?? [],
        memberApplied: (id) => deps.membership?.applied(id) ?? {},
        leases: l.coordinator?.leases() ?? [],
        decisionsMade: l.coordinator?.decisionsMade ?? null,
        settings: deps.lendingSettings,
        log: request.log,
      }),
    );
  });
}

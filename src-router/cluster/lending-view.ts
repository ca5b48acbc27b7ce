import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';
import { fetchAnswer, VIEW_LIMIT } from '../backends/answer-limits';
import { type ClusterNodeView, peerRead } from '../contract';
import { activeNodeSchema, heldNodeSchema } from '../contract/decisions';

export interface LendingViewDeps {
  nodeId: string;
  version: string;
  settingsHash: string;
  linksVersion: number;
  /** The guardian settings version this node runs (GUARD-1). */
  guardiansVersion: number;
  clusterToken: string;
  /** This node's held requests (queued / held / lent). */
  localHeld(): unknown[];
  /** This node's active requests (UI-2). */
  localActive(): unknown[];
  members(): { nodeId: string; url: string }[];
  memberViews(): ClusterNodeView[];
  /** The versions of links and guardian settings a member reports in its snapshot. */
  memberApplied(nodeId: string): { linksVersion?: number; guardiansVersion?: number };
  leases: unknown[];
  decisionsMade: number | null;
  settings: Record<string, unknown>;
  log: FastifyBaseLogger;
}

/**
 * The Lending tab and the Nodes page (UI-1, UI-2): live leases, settings, each node's build and whether it runs the
 * master's settings, and every node's held requests marked queued / held / lent with their first arrival.
 */
export async function lendingView(d: LendingViewDeps) {
  const [held, active] = await Promise.all([
    gather(d, 'held', heldNodeSchema, { nodeId: d.nodeId, models: d.localHeld() }, (nodeId, error) => ({
      nodeId,
      models: [],
      error,
    })),
    gather(d, 'active', activeNodeSchema, { nodeId: d.nodeId, requests: d.localActive() }, (nodeId, error) => ({
      nodeId,
      requests: [],
      error,
    })),
  ]);
  const nodes = [
    {
      nodeId: d.nodeId,
      version: d.version,
      settingsHash: d.settingsHash,
      inSync: true,
      linksVersion: d.linksVersion,
      guardiansVersion: d.guardiansVersion,
    },
    ...d.memberViews().map((v) => {
      const { linksVersion, guardiansVersion } = d.memberApplied(v.nodeId);
      return {
        nodeId: v.nodeId,
        version: v.version,
        settingsHash: v.settingsHash,
        inSync: v.settingsHash === d.settingsHash,
        healthy: v.healthy,
        ...(linksVersion === undefined ? {} : { linksVersion }),
        ...(guardiansVersion === undefined ? {} : { guardiansVersion }),
      };
    }),
  ];
  return { leases: d.leases, decisionsMade: d.decisionsMade, settings: d.settings, nodes, held, active };
}

/** This node's part, then every member's `GET /router/v1/node/{what}` parsed with its schema; a failure is that node's `error`. */
async function gather<T>(
  d: LendingViewDeps,
  what: 'held' | 'active',
  schema: z.ZodType<T>,
  local: unknown,
  failed: (nodeId: string, error: string) => unknown,
) {
  return Promise.all([
    Promise.resolve(local),
    ...d.members().map(async (m) => {
      try {
        const res = await fetch(`${m.url}/router/v1/node/${what}`, {
          headers: { authorization: `Bearer ${d.clusterToken}` },
          signal: AbortSignal.timeout(3_000),
        });
        // An older build serves no active requests: say so rather than show none.
        if (res.status === 404 && what === 'active') throw new Error("not reported by this node's build");
        if (!res.ok) throw new Error(`${res.status}`);
        const view = peerRead(schema).safeParse(await fetchAnswer(res).json(VIEW_LIMIT));
        if (!view.success)
          throw new Error(
            `not a ${what} view: ${view.error.issues[0]?.path.join('.') || '(root)'}: ${view.error.issues[0]?.message}`,
          );
        return view.data;
      } catch (err) {
        d.log.warn({ nodeId: m.nodeId }, `${what} requests of node not read: ${(err as Error).message}`);
        return failed(m.nodeId, (err as Error).message);
      }
    }),
  ]);
}

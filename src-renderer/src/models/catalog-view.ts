import type { ClusterLaneNode, ClusterModel, ConsoleModel, EngineState } from '../../../src-router/contract';
import { SOURCE_LABEL } from '../record-source';

/**
 * The Models screen on a master: the merged cluster catalog, one row per public ID with its replicas
 * (node, local ID, availability) and the lane state on the node that holds each one. This node's replicas take the
 * engine state of its own models list; the others the runtime status their node answered. Pure.
 */

/** A replica's lane state: an engine state, or `unknown` when its node's state could not be read. */
export type ReplicaLaneState = EngineState | 'unknown';

export interface ReplicaRow {
  nodeId: string;
  localId: string;
  available: boolean;
  lane: ReplicaLaneState;
  /** What else is known: active/queued requests, the engine's last error, or why the state is unknown. */
  detail: string | null;
}

export interface CatalogRow {
  id: string;
  /** Set when `id` is a suffixed conflict (same public ID, different hashes): the ID the configs ask for. */
  suffixedFrom: string | null;
  capabilities: string[];
  /** Where the record comes from, when the catalog says (`source`); null otherwise. */
  source: string | null;
  replicas: ReplicaRow[];
}

export interface CatalogInputs {
  catalog: ClusterModel[];
  lanes: ClusterLaneNode[] | null;
  /** This node's models (`console/models`) and its node ID. */
  localModels: ConsoleModel[] | null;
  localNodeId: string | null;
}

function laneOf(nodeId: string, localId: string, input: CatalogInputs): Pick<ReplicaRow, 'lane' | 'detail'> {
  if (nodeId === input.localNodeId) {
    const own = input.localModels?.find((m) => m.localId === localId);
    if (own) return { lane: own.state, detail: own.lastError };
  }
  const node = input.lanes?.find((n) => n.nodeId === nodeId);
  if (!node)
    return {
      lane: 'unknown',
      detail: input.lanes ? `node ${nodeId} not in the lane state` : 'lane state not read yet',
    };
  if (!node.status) return { lane: 'unknown', detail: node.error ?? `node ${nodeId} did not answer` };
  const m = node.status.models.find((x) => x.localId === localId);
  if (!m) return { lane: 'unknown', detail: `node ${nodeId} does not report ${localId}` };
  return {
    lane: m.loaded ? 'ready' : m.loading ? 'starting' : 'stopped',
    detail: `${m.active} active · ${m.queued} queued`,
  };
}

/** ID-1: where the record comes from, labelled as the Models table labels it; null from an older node that says nothing. */
const sourceOf = (m: ClusterModel): string | null => (m.source ? SOURCE_LABEL[m.source] : null);

export function catalogRows(input: CatalogInputs): CatalogRow[] {
  return input.catalog.map((m) => ({
    id: m.id,
    suffixedFrom: m.id !== m.baseId ? m.baseId : null,
    capabilities: m.capabilities,
    source: sourceOf(m),
    replicas: m.replicas.map((r) => ({
      nodeId: r.nodeId,
      localId: r.localId,
      available: r.available,
      ...laneOf(r.nodeId, r.localId, input),
    })),
  }));
}

/** What the Models screen shows: the merged catalog on a master, this node's own models elsewhere. */
export const showsCatalog = (role: string | null | undefined) => role === 'master';

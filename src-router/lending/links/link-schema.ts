/**
 * Routing links inside the router (camelCase, unix ms) and their wire form on the site API (snake_case, ISO times,
 * schemas in `contract/links.ts`). The two lanes live under separate paths (LINK-2).
 */
import type { LinkEnd, LinkRecord, LinkUpdate, LinkWeights } from '../../contract';
import type { LendingLane, LinkSpec, ModelRef } from '../types';

export type {
  LinkCandidate,
  LinkCandidateList,
  LinkCreate,
  LinkCreateInput,
  LinkEnd,
  LinkList,
  LinkRecord,
  LinkUpdate,
  LinkWeights,
} from '../../contract';
export {
  linkCandidateListSchema,
  linkCandidateSchema,
  linkCreateSchema,
  linkEndSchema,
  linkLaneSchema,
  linkListSchema,
  linkRecordSchema,
  linkUpdateSchema,
  linkWeightsSchema,
} from '../../contract';

/** Site API collection path of each lane (LINK-2). */
export const LINK_LANE_PATHS: Record<LendingLane, string> = {
  image: '/router/v1/site/routing-groups',
  text: '/router/v1/site/text-routing-groups',
};

/** One stored link (a row of `links`). */
export interface StoredLink {
  id: string;
  lane: LendingLane;
  owner: ModelRef;
  helper: ModelRef;
  loadIfUnloaded: boolean;
  restoreAfterBorrow: boolean;
  weights: LinkWeights;
  /** The operator acknowledged that the helper may answer with different weights (on this link or an earlier one). */
  acknowledged: boolean;
  createdAt: number;
  updatedAt: number;
}

/** A validated link, ready to store. */
export type NewLink = Omit<StoredLink, 'id' | 'createdAt' | 'updatedAt'>;

/** What an update may change (LINK-4 flags and the acknowledgement). */
export interface LinkPatch {
  loadIfUnloaded?: boolean;
  restoreAfterBorrow?: boolean;
  acknowledged?: boolean;
}

/** A link as the master pushes it to slaves (LEASE-1): the planner's spec, weights and acknowledgement when known. */
export type ReplicatedLink = LinkSpec & Partial<Pick<StoredLink, 'weights' | 'acknowledged'>>;

export const fromEnd = (e: LinkEnd): ModelRef => ({ nodeId: e.node_id, model: e.model });
export const toEnd = (r: ModelRef): LinkEnd => ({ node_id: r.nodeId, model: r.model });
export const sameRef = (a: ModelRef, b: ModelRef) => a.nodeId === b.nodeId && a.model === b.model;

export function toLinkRecord(l: StoredLink): LinkRecord {
  return {
    id: l.id,
    lane: l.lane,
    owner: toEnd(l.owner),
    helper: toEnd(l.helper),
    load_if_unloaded: l.loadIfUnloaded,
    restore_after_borrow: l.restoreAfterBorrow,
    weights: l.weights,
    acknowledged: l.acknowledged,
    created_at: new Date(l.createdAt).toISOString(),
    updated_at: new Date(l.updatedAt).toISOString(),
  };
}

export function toLinkSpec(
  l: Pick<StoredLink, 'id' | 'lane' | 'owner' | 'helper' | 'loadIfUnloaded' | 'restoreAfterBorrow'>,
): LinkSpec {
  return {
    id: l.id,
    lane: l.lane,
    owner: { ...l.owner },
    helper: { ...l.helper },
    loadIfUnloaded: l.loadIfUnloaded,
    restoreAfterBorrow: l.restoreAfterBorrow,
  };
}

export function patchFromUpdate(u: LinkUpdate): LinkPatch {
  const p: LinkPatch = {};
  if (u.load_if_unloaded !== undefined) p.loadIfUnloaded = u.load_if_unloaded;
  if (u.restore_after_borrow !== undefined) p.restoreAfterBorrow = u.restore_after_borrow;
  if (u.acknowledge_different_weights !== undefined) p.acknowledged = u.acknowledge_different_weights;
  return p;
}

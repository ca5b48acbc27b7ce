import type {
  ClusterModel,
  LinkCandidate,
  LinkCandidateList,
  LinkEnd,
  LinkLane,
  LinkRecord,
} from '../../../src-router/contract';
import { formatDateTimeMs, formatModelRef, type PillTone } from '../format';

/**
 * The Links screen (UI-3, LINK-1..4, LLM-1), pure: the two lanes, the anchors (owners) from the merged catalog,
 * the picker's candidates with their same/different-weights label (ineligible ones kept, disabled with the reason),
 * and the stored links. Tested in renderer-links-view.test.ts.
 */

export interface LaneInfo {
  lane: LinkLane;
  title: string;
  path: string;
  hint: string;
}

export const LANES: readonly LaneInfo[] = [
  {
    lane: 'text',
    title: 'LLM lane',
    path: '/router/v1/site/text-routing-groups',
    hint: 'Text models that serve one request at a time and state a context window (LLM-1); multimodal only with multimodal.',
  },
  { lane: 'image', title: 'Image lane', path: '/router/v1/site/routing-groups', hint: 'Image and video models.' },
];

/** LINK-2: the capabilities that put a model in a lane (the router's link rules; parity-tested). */
export const LANE_CAPABILITIES: Record<LinkLane, readonly string[]> = {
  image: ['image', 'video'],
  text: ['text', 'multimodal'],
};

export const fitsLane = (capabilities: readonly string[], lane: LinkLane): boolean =>
  capabilities.some((c) => LANE_CAPABILITIES[lane].includes(c));

/** A model on a node, as a picker value (unambiguous whatever the IDs contain): `["node","model"]`. */
export const endKey = (e: LinkEnd): string => JSON.stringify([e.node_id, e.model]);

export interface AnchorOption {
  key: string;
  end: LinkEnd;
  label: string;
}

/** Every model of the lane on every node (one per node and local ID), sorted by node then model. */
export function anchorOptions(models: readonly ClusterModel[] | null | undefined, lane: LinkLane): AnchorOption[] {
  const out: AnchorOption[] = [];
  for (const m of models ?? []) {
    if (!fitsLane(m.capabilities, lane)) continue;
    for (const r of m.replicas) {
      const end = { node_id: r.nodeId, model: r.localId };
      out.push({
        key: endKey(end),
        end,
        label: `${formatModelRef(r.nodeId, r.localId)}${m.id !== r.localId ? ` (${m.id})` : ''}`,
      });
    }
  }
  return out.sort((a, b) =>
    a.end.node_id < b.end.node_id ? -1 : a.end.node_id > b.end.node_id ? 1 : a.end.model < b.end.model ? -1 : 1,
  );
}

export interface CandidateView {
  key: string;
  end: LinkEnd;
  label: string;
  publicId: string;
  weights: 'same weights' | 'different weights';
  weightsTone: PillTone;
  disabled: boolean;
  /** Why it cannot be linked (disabled), or null. */
  reason: string | null;
  /** Saving a link to it needs the different-weights acknowledgement (LINK-3). */
  needsAck: boolean;
}

/** Every candidate the node listed, in its order: ineligible ones disabled with the reason, never dropped. */
export function candidateViews(list: LinkCandidateList | null | undefined): CandidateView[] {
  return (list?.candidates ?? []).map((c: LinkCandidate) => {
    const end = { node_id: c.node_id, model: c.model };
    return {
      key: endKey(end),
      end,
      label: formatModelRef(c.node_id, c.model),
      publicId: c.public_id,
      weights: c.label,
      weightsTone: c.weights === 'same' ? 'ok' : 'busy',
      disabled: c.disabled,
      reason: c.disabled ? (c.reason ?? `cannot be linked (${c.code ?? 'no reason given'})`) : null,
      needsAck: !c.disabled && c.acknowledgement_required,
    };
  });
}

export const NO_CANDIDATES = 'No model of this lane on another node: a link joins models on two different nodes.';
export const NO_ANCHORS = 'No model of this lane in the cluster catalog.';

export interface LinkRowView {
  id: string;
  owner: string;
  helper: string;
  weights: string;
  weightsTone: PillTone;
  acknowledged: boolean;
  loadIfUnloaded: boolean;
  restoreAfterBorrow: boolean;
  created: string;
  createdTitle: string;
}

export function linkRows(links: readonly LinkRecord[]): LinkRowView[] {
  return links.map((l) => {
    const created = Date.parse(l.created_at);
    return {
      id: l.id,
      owner: formatModelRef(l.owner.node_id, l.owner.model),
      helper: formatModelRef(l.helper.node_id, l.helper.model),
      weights:
        l.weights === 'same'
          ? 'same weights'
          : l.acknowledged
            ? 'different weights · acknowledged'
            : 'different weights',
      weightsTone: l.weights === 'same' ? 'ok' : 'busy',
      acknowledged: l.acknowledged,
      loadIfUnloaded: l.load_if_unloaded,
      restoreAfterBorrow: l.restore_after_borrow,
      created: Number.isNaN(created) ? l.created_at : formatDateTimeMs(created).slice(0, 19),
      createdTitle: l.created_at,
    };
  });
}

export const NO_LINKS =
  'No links in this lane: nothing is lent. A link is one-way (owner lends, helper borrows); the reverse is a separate link.';

export const FLAG_HINT = {
  load_if_unloaded: 'The helper may load the linked model (displacing what it holds) to take lent work (HELPER-3).',
  restore_after_borrow: 'After borrowed work, the helper reloads the model it held before (HELPER-4).',
} as const;

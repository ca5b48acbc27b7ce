/**
 * The Replay card's links editor, pure: the recorded links (the cluster's stored links, which a replay
 * takes when it is given none) as rows, the models the cluster has as the add-link picker's options, adding a link
 * (a field-named error — `links.owner`, `links.helper` — before anything is asked), removing one, what changed, and
 * the `links` of the replay request.
 */
import type { ClusterModel, LinkList } from '../../../src-router/contract';
import type { ReplayLinkWire } from '../../../src-router/contract/replay';

export type ReplayLane = 'image' | 'text';

export interface ReplayLinkRow {
  /** `lane:owner-node/model>helper-node/model`: one row per pair and lane. */
  key: string;
  lane: ReplayLane;
  owner: { nodeId: string; model: string };
  helper: { nodeId: string; model: string };
  loadIfUnloaded: boolean;
  restoreAfterBorrow: boolean;
}

/** The links being edited: the recorded ones when editing began, and the list as it is now. */
export interface ReplayLinksEdit {
  recorded: ReplayLinkRow[];
  current: ReplayLinkRow[];
}

/** A model the picker offers: value `node/model` (node IDs hold no `/`). */
export interface ReplayModelOption {
  value: string;
  label: string;
  lane: ReplayLane;
}

export const refValue = (r: { nodeId: string; model: string }) => `${r.nodeId}/${r.model}`;
export const refLabel = (r: { nodeId: string; model: string }) => `${r.model} on ${r.nodeId}`;

function linkRow(
  lane: ReplayLane,
  owner: ReplayLinkRow['owner'],
  helper: ReplayLinkRow['helper'],
  loadIfUnloaded: boolean,
  restoreAfterBorrow: boolean,
): ReplayLinkRow {
  return {
    key: `${lane}:${refValue(owner)}>${refValue(helper)}`,
    lane,
    owner,
    helper,
    loadIfUnloaded,
    restoreAfterBorrow,
  };
}

/** The recorded links as rows (both lanes' stored links, as the Links screen reads them), text first. */
export function recordedLinkRows(lists: Partial<Record<ReplayLane, LinkList | null>>): ReplayLinkRow[] {
  return (['text', 'image'] as const).flatMap((lane) =>
    (lists[lane]?.links ?? []).map((l) =>
      linkRow(
        l.lane,
        { nodeId: l.owner.node_id, model: l.owner.model },
        { nodeId: l.helper.node_id, model: l.helper.model },
        l.load_if_unloaded,
        l.restore_after_borrow,
      ),
    ),
  );
}

/** LINK-2's lanes: image and video models link on the image lane, text and multimodal ones on the text lane. */
function laneOf(capabilities: readonly string[]): ReplayLane | null {
  if (capabilities.some((c) => c === 'image' || c === 'video')) return 'image';
  if (capabilities.some((c) => c === 'text' || c === 'multimodal')) return 'text';
  return null;
}

/** Every model of the cluster that can be in a link, one per node and local ID, sorted by label. */
export function replayModelOptions(models: readonly ClusterModel[] | null | undefined): ReplayModelOption[] {
  const out = new Map<string, ReplayModelOption>();
  for (const m of models ?? []) {
    const lane = laneOf(m.capabilities);
    if (!lane) continue;
    for (const r of m.replicas) {
      const ref = { nodeId: r.nodeId, model: r.localId };
      out.set(refValue(ref), { value: refValue(ref), label: `${refLabel(ref)} (${lane})`, lane });
    }
  }
  return [...out.values()].sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}

export type AddLinkCheck =
  | { ok: true; links: ReplayLinkRow[] }
  | { ok: false; field: 'links.owner' | 'links.helper'; message: string };

const parseRef = (value: string) => {
  const slash = value.indexOf('/');
  return { nodeId: value.slice(0, slash), model: value.slice(slash + 1) };
};

/** Adds owner → helper (picked as option values) to `links`; what cannot be a link is named by its field. */
export function addLink(
  links: readonly ReplayLinkRow[],
  pick: { owner: string; helper: string },
  options: readonly ReplayModelOption[],
): AddLinkCheck {
  const owner = options.find((o) => o.value === pick.owner);
  const helper = options.find((o) => o.value === pick.helper);
  if (!pick.owner)
    return { ok: false, field: 'links.owner', message: 'links: pick the owner model (the one that lends)' };
  if (!owner)
    return { ok: false, field: 'links.owner', message: `links: ${pick.owner} is not a model the cluster has` };
  if (!pick.helper)
    return { ok: false, field: 'links.helper', message: 'links: pick the helper model (the one that borrows)' };
  if (!helper)
    return { ok: false, field: 'links.helper', message: `links: ${pick.helper} is not a model the cluster has` };
  const o = parseRef(owner.value);
  const h = parseRef(helper.value);
  if (o.nodeId === h.nodeId)
    return {
      ok: false,
      field: 'links.helper',
      message: `links: the helper must be on another node than the owner (both on ${o.nodeId})`,
    };
  if (owner.lane !== helper.lane)
    return {
      ok: false,
      field: 'links.helper',
      message: `links: ${refLabel(h)} is a ${helper.lane} model and ${refLabel(o)} a ${owner.lane} one; a link joins one lane`,
    };
  const row = linkRow(owner.lane, o, h, true, false);
  if (links.some((l) => l.key === row.key))
    return {
      ok: false,
      field: 'links.helper',
      message: `links: ${refLabel(o)} → ${refLabel(h)} is already in the list`,
    };
  return { ok: true, links: [...links, row] };
}

export const removeLink = (links: readonly ReplayLinkRow[], key: string): ReplayLinkRow[] =>
  links.filter((l) => l.key !== key);

/** What the edit changes, as the card says it: `no links`, else each removed (−) and added (+) link. */
export function linkChanges(edit: ReplayLinksEdit | null): string[] {
  if (!edit) return [];
  const was = new Set(edit.recorded.map((l) => l.key));
  const now = new Set(edit.current.map((l) => l.key));
  if (edit.current.length === 0 && edit.recorded.length > 0) return ['no links'];
  const say = (l: ReplayLinkRow) => `${refLabel(l.owner)} → ${refLabel(l.helper)}`;
  return [
    ...edit.recorded.filter((l) => !now.has(l.key)).map((l) => `−${say(l)}`),
    ...edit.current.filter((l) => !was.has(l.key)).map((l) => `+${say(l)}`),
  ];
}

/** The request's `links`: absent while the list is the recorded one (the node takes its own), else the whole list. */
export function linksOfEdit(edit: ReplayLinksEdit | null): ReplayLinkWire[] | undefined {
  if (!edit || linkChanges(edit).length === 0) return undefined;
  return edit.current.map((l) => ({
    lane: l.lane,
    owner: l.owner,
    helper: l.helper,
    loadIfUnloaded: l.loadIfUnloaded,
    restoreAfterBorrow: l.restoreAfterBorrow,
  }));
}

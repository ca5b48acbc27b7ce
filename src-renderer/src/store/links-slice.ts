import type {
  LinkCandidateList,
  LinkCreateInput,
  LinkEnd,
  LinkLane,
  LinkList,
  LinkRecord,
  LinkUpdate,
} from '../../../src-router/contract';
import type { ApiFailure, ApiResult } from '../api/console-client';
import type { SliceCreator } from './types';

export interface CandidatesState {
  /** The anchor (owner) the candidates are for. */
  anchor: LinkEnd;
  list: LinkCandidateList | null;
  loading: boolean;
  failure: ApiFailure | null;
}

export interface LaneLinksState {
  /** The lane's stored links as last read; null before the first good answer. */
  list: LinkList | null;
  loading: boolean;
  failure: ApiFailure | null;
  fetchedAt: number | null;
  /** The picker's candidates for the chosen anchor; null with no anchor chosen. */
  candidates: CandidatesState | null;
  /** A create, update or delete is in flight. */
  writing: boolean;
}

export interface LinksSlice {
  links: Record<LinkLane, LaneLinksState>;
  /** Re-reads both lanes' links (and the candidates of a chosen anchor: they depend on the links). */
  fetchLinks(): Promise<void>;
  /** Reads the picker for `anchor` (null clears it). */
  fetchCandidates(lane: LinkLane, anchor: LinkEnd | null): Promise<void>;
  /** Writes return the node's answer as is (a 409 `acknowledgement_required` included); the lane is read again after. */
  createLink(lane: LinkLane, input: LinkCreateInput): Promise<ApiResult<LinkRecord>>;
  updateLink(lane: LinkLane, id: string, patch: LinkUpdate): Promise<ApiResult<LinkRecord>>;
  deleteLink(lane: LinkLane, id: string): Promise<ApiResult<null>>;
}

const LANES: LinkLane[] = ['text', 'image'];
const isRejection = (f: ApiFailure) => f.kind === 'rejected' || f.kind === 'no-token';
const sameEnd = (a: LinkEnd | undefined, b: LinkEnd) => a?.node_id === b.node_id && a?.model === b.model;
const emptyLane = (): LaneLinksState => ({
  list: null,
  loading: false,
  failure: null,
  fetchedAt: null,
  candidates: null,
  writing: false,
});

export const createLinksSlice: SliceCreator<LinksSlice> = (deps) => (set, get) => {
  const patchLane = (lane: LinkLane, patch: (l: LaneLinksState) => Partial<LaneLinksState>) =>
    set((s) => ({ links: { ...s.links, [lane]: { ...s.links[lane], ...patch(s.links[lane]) } } }));

  async function readLane(lane: LinkLane): Promise<void> {
    patchLane(lane, () => ({ loading: true }));
    const result = await deps.client.links(lane);
    if (result.ok)
      patchLane(lane, () => ({ list: result.value, loading: false, failure: null, fetchedAt: deps.now() }));
    else
      patchLane(lane, (l) => ({
        list: isRejection(result.failure) ? null : l.list,
        loading: false,
        failure: result.failure,
      }));
  }

  async function readCandidates(lane: LinkLane, anchor: LinkEnd): Promise<void> {
    patchLane(lane, (l) => ({
      candidates: {
        anchor,
        list: sameEnd(l.candidates?.anchor, anchor) ? l.candidates!.list : null,
        loading: true,
        failure: null,
      },
    }));
    const result = await deps.client.linkCandidates(lane, anchor);
    // Another anchor was chosen meanwhile: this answer is for a picker no longer shown.
    if (!sameEnd(get().links[lane].candidates?.anchor, anchor)) return;
    patchLane(lane, (l) => ({
      candidates: result.ok
        ? { anchor, list: result.value, loading: false, failure: null }
        : { anchor, list: l.candidates?.list ?? null, loading: false, failure: result.failure },
    }));
  }

  let inFlight: Promise<void> | null = null;
  const fetchLinks = () => {
    inFlight ??= Promise.all(
      LANES.map(async (lane) => {
        await readLane(lane);
        const anchor = get().links[lane].candidates?.anchor;
        if (anchor) await readCandidates(lane, anchor);
      }),
    )
      .then(() => undefined)
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };

  async function write<T>(lane: LinkLane, run: () => Promise<ApiResult<T>>): Promise<ApiResult<T>> {
    patchLane(lane, () => ({ writing: true }));
    try {
      const result = await run();
      // Links changed (or a gate answered): read what the node holds now; a read in flight started before the write.
      if (inFlight) await inFlight;
      await fetchLinks();
      return result;
    } finally {
      patchLane(lane, () => ({ writing: false }));
    }
  }

  return {
    links: { text: emptyLane(), image: emptyLane() },
    fetchLinks,
    fetchCandidates: async (lane, anchor) => {
      if (!anchor) return patchLane(lane, () => ({ candidates: null }));
      await readCandidates(lane, anchor);
    },
    createLink: (lane, input) => write(lane, () => deps.client.createLink(lane, input)),
    updateLink: (lane, id, patch) => write(lane, () => deps.client.updateLink(lane, id, patch)),
    deleteLink: (lane, id) => write(lane, () => deps.client.deleteLink(lane, id)),
  };
};

import type { ReplayResultWire } from '../../../src-router/contract/replay';
import type { ApiFailure } from '../api/console-client';
import {
  addLink,
  type ReplayLinksEdit,
  recordedLinkRows,
  removeLink,
  replayModelOptions,
} from '../lending/replay-links';
import { emptyReplayDraft, type ReplayDraft, replayRequestOf } from '../lending/replay-view';
import type { AppState, SliceCreator } from './types';

export interface ReplayState {
  draft: ReplayDraft;
  /** The last answer, and the draft it was asked with; null before the first. */
  result: ReplayResultWire | null;
  ranWith: ReplayDraft | null;
  running: boolean;
  /** The node's refusal or a draft value the form names (`param`: the field). */
  failure: ApiFailure | null;
}

export interface ReplaySlice {
  replay: ReplayState;
  /** Merges into the draft (its settings and link picks key by key). */
  setReplayDraft(patch: Partial<Omit<ReplayDraft, 'linkPick'>> & { linkPick?: Partial<ReplayDraft['linkPick']> }): void;
  /** Replays the draft's range (the last N minutes from now) with its changes. */
  runReplay(): Promise<void>;
  /** Drops one link (by row key) from the links the replay runs with. */
  removeReplayLink(key: string): void;
  /** Adds the picked owner → helper; a pick that cannot be a link is named by its field (`links.owner`, `links.helper`). */
  addReplayLink(): void;
  /** Every link removed (nothing can be lent). */
  clearReplayLinks(): void;
  /** Back to the recorded links. */
  resetReplayLinks(): void;
}

/** The recorded links (the stored links the Links screen reads too); null until both lanes were read. */
function recordedReplayLinks(s: Pick<AppState, 'links'>): ReturnType<typeof recordedLinkRows> | null {
  if (!s.links.text.list || !s.links.image.list) return null;
  return recordedLinkRows({ text: s.links.text.list, image: s.links.image.list });
}

const NOT_READ: ApiFailure = {
  kind: 'invalid',
  status: null,
  message: 'links: the recorded links are not read yet',
  param: 'links',
};

/** The Lending tab's what-if replay: mirrors POST /router/v1/console/replay. */
export const createReplaySlice: SliceCreator<ReplaySlice> = (deps) => (set, get) => {
  let generation = 0;
  const patchReplay = (patch: Partial<ReplayState>) => set((s) => ({ replay: { ...s.replay, ...patch } }));
  const patchDraft = (patch: Partial<ReplayDraft>) =>
    set((s) => ({ replay: { ...s.replay, draft: { ...s.replay.draft, ...patch } } }));
  /** The edit the links change starts from: the one under way, else the recorded links as they were read. */
  const edit = (): ReplayLinksEdit | null => {
    const current = get().replay.draft.links;
    if (current) return current;
    const recorded = recordedReplayLinks(get());
    return recorded ? { recorded, current: recorded } : null;
  };
  const changeLinks = (change: (e: ReplayLinksEdit) => ReplayLinksEdit['current']) => {
    const e = edit();
    if (!e) return patchReplay({ failure: NOT_READ });
    patchDraft({ links: { recorded: e.recorded, current: change(e) } });
    if (get().replay.failure?.param?.startsWith('links')) patchReplay({ failure: null });
  };

  return {
    replay: { draft: emptyReplayDraft(), result: null, ranWith: null, running: false, failure: null },

    setReplayDraft: (patch) =>
      set((s) => ({
        replay: {
          ...s.replay,
          draft: {
            ...s.replay.draft,
            ...patch,
            settings: { ...s.replay.draft.settings, ...patch.settings },
            linkPick: { ...s.replay.draft.linkPick, ...patch.linkPick },
          },
        },
      })),

    runReplay: async () => {
      const draft = get().replay.draft;
      const checked = replayRequestOf(draft, deps.now());
      if (!checked.ok) {
        patchReplay({ failure: { kind: 'invalid', status: null, message: checked.message, param: checked.field } });
        return;
      }
      const mine = ++generation;
      patchReplay({ running: true, failure: null });
      const r = await deps.client.replay(checked.request);
      if (mine !== generation) return;
      if (r.ok) patchReplay({ result: r.value, ranWith: draft, running: false, failure: null });
      else patchReplay({ running: false, failure: r.failure });
    },

    removeReplayLink: (key) => changeLinks((e) => removeLink(e.current, key)),

    addReplayLink: () => {
      const e = edit();
      if (!e) return patchReplay({ failure: NOT_READ });
      const checked = addLink(e.current, get().replay.draft.linkPick, replayModelOptions(get().cluster.models));
      if (!checked.ok)
        return patchReplay({
          failure: { kind: 'invalid', status: null, message: checked.message, param: checked.field },
        });
      patchDraft({ links: { recorded: e.recorded, current: checked.links }, linkPick: { owner: '', helper: '' } });
      if (get().replay.failure?.param?.startsWith('links')) patchReplay({ failure: null });
    },

    clearReplayLinks: () => changeLinks(() => []),

    resetReplayLinks: () => {
      patchDraft({ links: null });
      if (get().replay.failure?.param?.startsWith('links')) patchReplay({ failure: null });
    },
  };
};

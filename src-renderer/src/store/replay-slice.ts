import type { ReplayResultWire } from '../../../src-router/contract/replay';
import type { ApiFailure } from '../api/console-client';
import { emptyReplayDraft, replayRequestOf, type ReplayDraft } from '../lending/replay-view';
import type { SliceCreator } from './types';

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
  setReplayDraft(patch: Partial<ReplayDraft>): void;
  /** Replays the draft's range (the last N minutes from now) with its changes. */
  runReplay(): Promise<void>;
}

/** The Lending tab's what-if replay: mirrors POST /router/v1/console/replay. */
export const createReplaySlice: SliceCreator<ReplaySlice> = (deps) => (set, get) => {
  let generation = 0;
  return {
    replay: { draft: emptyReplayDraft(), result: null, ranWith: null, running: false, failure: null },

    setReplayDraft: (patch) => set((s) => ({ replay: { ...s.replay, draft: { ...s.replay.draft, ...patch, settings: { ...s.replay.draft.settings, ...patch.settings } } } })),

    runReplay: async () => {
      const draft = get().replay.draft;
      const checked = replayRequestOf(draft, deps.now());
      if (!checked.ok) {
        set((s) => ({ replay: { ...s.replay, failure: { kind: 'invalid', status: null, message: checked.message, param: checked.field } } }));
        return;
      }
      const mine = ++generation;
      set((s) => ({ replay: { ...s.replay, running: true, failure: null } }));
      const r = await deps.client.replay(checked.request);
      if (mine !== generation) return;
      if (r.ok) set((s) => ({ replay: { ...s.replay, result: r.value, ranWith: draft, running: false, failure: null } }));
      else set((s) => ({ replay: { ...s.replay, running: false, failure: r.failure } }));
    },
  };
};

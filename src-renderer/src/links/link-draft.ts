import type { LinkCreateInput, LinkEnd } from '../../../src-router/contract';

/**
 * The new-link form of one lane (UI-3, LINK-3, LINK-4), pure: anchor (owner), helper, the two flags, and the
 * different-weights acknowledgement. Saving without it may come back 409 `acknowledgement_required`: the form then
 * shows the node's message and an explicit checkbox, and saves again only once it is ticked. Stored links live in
 * the `links` slice; this is UI state. Tested in renderer-links-draft.test.ts.
 */

export type DraftPhase = 'editing' | 'saving' | 'needs-ack' | 'saved' | 'error';

export interface LinkDraft {
  anchor: LinkEnd | null;
  helper: LinkEnd | null;
  loadIfUnloaded: boolean;
  restoreAfterBorrow: boolean;
  phase: DraftPhase;
  /** The node's acknowledgement message (409), shown with the checkbox; null until asked. */
  ackMessage: string | null;
  /** The operator ticked the acknowledgement. */
  acknowledged: boolean;
  /** The last failed save, as the node worded it. */
  error: string | null;
}

/** LINK-4 defaults: loading allowed, no restore. */
export const initialLinkDraft = (anchor: LinkEnd | null = null): LinkDraft => ({
  anchor,
  helper: null,
  loadIfUnloaded: true,
  restoreAfterBorrow: false,
  phase: 'editing',
  ackMessage: null,
  acknowledged: false,
  error: null,
});

export const ACK_CODE = 'acknowledgement_required';

export type LinkDraftAction =
  | { type: 'anchor'; anchor: LinkEnd | null }
  | { type: 'helper'; helper: LinkEnd | null }
  | { type: 'flag'; flag: 'loadIfUnloaded' | 'restoreAfterBorrow'; value: boolean }
  | { type: 'acknowledge'; value: boolean }
  | { type: 'save-start' }
  | { type: 'saved' }
  | { type: 'save-failed'; code: string | null; message: string };

const sameEnd = (a: LinkEnd | null, b: LinkEnd | null) => a?.node_id === b?.node_id && a?.model === b?.model;

export function linkDraftReducer(d: LinkDraft, a: LinkDraftAction): LinkDraft {
  switch (a.type) {
    case 'anchor':
      // Another anchor: another set of candidates, so nothing chosen or acknowledged carries over.
      return sameEnd(d.anchor, a.anchor) ? d : initialLinkDraft(a.anchor);
    case 'helper':
      // The acknowledgement was for one pair: a new helper asks again if it needs to.
      return sameEnd(d.helper, a.helper)
        ? d
        : { ...d, helper: a.helper, phase: 'editing', ackMessage: null, acknowledged: false, error: null };
    case 'flag':
      return {
        ...d,
        [a.flag]: a.value,
        phase: d.phase === 'saved' || d.phase === 'error' ? 'editing' : d.phase,
        error: null,
      };
    case 'acknowledge':
      return { ...d, acknowledged: a.value };
    case 'save-start':
      return { ...d, phase: 'saving', error: null };
    case 'saved':
      return { ...initialLinkDraft(d.anchor), phase: 'saved' };
    case 'save-failed':
      if (a.code === ACK_CODE)
        return { ...d, phase: 'needs-ack', ackMessage: a.message, acknowledged: false, error: null };
      return { ...d, phase: d.ackMessage ? 'needs-ack' : 'error', error: a.message };
  }
}

/** Save is offered with both ends chosen, nothing in flight, and the acknowledgement ticked once it was asked for. */
export function canSave(d: LinkDraft): boolean {
  if (!d.anchor || !d.helper || d.phase === 'saving') return false;
  return d.ackMessage === null || d.acknowledged;
}

export type SavePlan = { ok: true; body: LinkCreateInput } | { ok: false; message: string };

/** The POST body: `acknowledge_different_weights` only when the operator ticked it (never sent on their behalf). */
export function planSave(d: LinkDraft): SavePlan {
  if (!d.anchor) return { ok: false, message: 'Choose the owner (the model that lends).' };
  if (!d.helper) return { ok: false, message: 'Choose the helper (the model that borrows).' };
  if (d.ackMessage !== null && !d.acknowledged)
    return { ok: false, message: 'Tick the acknowledgement to save a link to a model with different weights.' };
  return {
    ok: true,
    body: {
      owner: d.anchor,
      helper: d.helper,
      load_if_unloaded: d.loadIfUnloaded,
      restore_after_borrow: d.restoreAfterBorrow,
      ...(d.acknowledged ? { acknowledge_different_weights: true } : {}),
    },
  };
}

import { describe, expect, it } from 'vitest';
import {
  ACK_CODE,
  canSave,
  initialLinkDraft,
  type LinkDraft,
  type LinkDraftAction,
  linkDraftReducer,
  planSave,
} from '../../src-renderer/src/links/link-draft';

// The new-link form (UI-3, LINK-3, LINK-4): the acknowledgement flow as a state machine.

const A = { node_id: 'master', model: 'a' };
const B = { node_id: 'gpu-b', model: 'b' };
const C = { node_id: 'gpu-b', model: 'c' };
const ACK_MESSAGE = 'b on gpu-b does not have the same weights as a on master (their model hashes differ). …';

const run = (...actions: LinkDraftAction[]): LinkDraft => actions.reduce(linkDraftReducer, initialLinkDraft());

describe('new link: choosing', () => {
  it('starts empty with LINK-4’s defaults: loading allowed, no restore; nothing to save', () => {
    const d = initialLinkDraft();
    expect(d).toMatchObject({
      anchor: null,
      helper: null,
      loadIfUnloaded: true,
      restoreAfterBorrow: false,
      phase: 'editing',
      ackMessage: null,
      acknowledged: false,
    });
    expect(canSave(d)).toBe(false);
    expect(planSave(d)).toEqual({ ok: false, message: 'Choose the owner (the model that lends).' });
    expect(planSave(run({ type: 'anchor', anchor: A }))).toEqual({
      ok: false,
      message: 'Choose the helper (the model that borrows).',
    });
  });

  it('owner and helper chosen: the body has both ends and the flags, and no acknowledgement on the operator’s behalf', () => {
    const d = run(
      { type: 'anchor', anchor: A },
      { type: 'helper', helper: B },
      { type: 'flag', flag: 'restoreAfterBorrow', value: true },
    );
    expect(canSave(d)).toBe(true);
    expect(planSave(d)).toEqual({
      ok: true,
      body: { owner: A, helper: B, load_if_unloaded: true, restore_after_borrow: true },
    });
  });

  it('another owner: another picker, so the helper and any acknowledgement are dropped; the same owner changes nothing', () => {
    const asked = run(
      { type: 'anchor', anchor: A },
      { type: 'helper', helper: B },
      { type: 'save-start' },
      { type: 'save-failed', code: ACK_CODE, message: ACK_MESSAGE },
    );
    expect(linkDraftReducer(asked, { type: 'anchor', anchor: A })).toBe(asked);
    expect(linkDraftReducer(asked, { type: 'anchor', anchor: C })).toEqual(initialLinkDraft(C));
  });
});

describe('new link: the different-weights acknowledgement (409 acknowledgement_required)', () => {
  const asked = () =>
    run(
      { type: 'anchor', anchor: A },
      { type: 'helper', helper: B },
      { type: 'save-start' },
      { type: 'save-failed', code: ACK_CODE, message: ACK_MESSAGE },
    );

  it('saving: in flight, no second save', () => {
    const d = run({ type: 'anchor', anchor: A }, { type: 'helper', helper: B }, { type: 'save-start' });
    expect(d.phase).toBe('saving');
    expect(canSave(d)).toBe(false);
  });

  it('the 409 shows the node’s message and an unticked checkbox; Save waits for the tick', () => {
    const d = asked();
    expect(d).toMatchObject({ phase: 'needs-ack', ackMessage: ACK_MESSAGE, acknowledged: false, error: null });
    expect(canSave(d)).toBe(false);
    expect(planSave(d)).toEqual({
      ok: false,
      message: 'Tick the acknowledgement to save a link to a model with different weights.',
    });
  });

  it('ticked: the second save sends acknowledge_different_weights: true; unticked again, it waits again', () => {
    const ticked = linkDraftReducer(asked(), { type: 'acknowledge', value: true });
    expect(canSave(ticked)).toBe(true);
    expect(planSave(ticked)).toEqual({
      ok: true,
      body: {
        owner: A,
        helper: B,
        load_if_unloaded: true,
        restore_after_borrow: false,
        acknowledge_different_weights: true,
      },
    });
    expect(canSave(linkDraftReducer(ticked, { type: 'acknowledge', value: false }))).toBe(false);
  });

  it('saved: the form is empty again for the same owner, and says so', () => {
    const saved = [
      { type: 'acknowledge', value: true } as const,
      { type: 'save-start' } as const,
      { type: 'saved' } as const,
    ].reduce(linkDraftReducer, asked());
    expect(saved).toEqual({ ...initialLinkDraft(A), phase: 'saved' });
  });

  it('a new helper asks again: the acknowledgement was for one pair', () => {
    const ticked = linkDraftReducer(asked(), { type: 'acknowledge', value: true });
    const other = linkDraftReducer(ticked, { type: 'helper', helper: C });
    expect(other).toMatchObject({ helper: C, phase: 'editing', ackMessage: null, acknowledged: false });
    expect(planSave(other)).toEqual({
      ok: true,
      body: { owner: A, helper: C, load_if_unloaded: true, restore_after_borrow: false },
    });
    expect(linkDraftReducer(ticked, { type: 'helper', helper: B })).toBe(ticked);
  });

  it('another failure keeps the acknowledgement on screen and shows the error (a gate, a slave)', () => {
    const ticked = linkDraftReducer(asked(), { type: 'acknowledge', value: true });
    const refused = linkDraftReducer(ticked, {
      type: 'save-failed',
      code: 'not_an_operator',
      message: 'only operators (console.operators) can change links',
    });
    expect(refused).toMatchObject({
      phase: 'needs-ack',
      ackMessage: ACK_MESSAGE,
      acknowledged: true,
      error: 'only operators (console.operators) can change links',
    });
    expect(canSave(refused)).toBe(true);
  });

  it('a failure before any acknowledgement is an error; changing a flag clears it', () => {
    const d = run(
      { type: 'anchor', anchor: A },
      { type: 'helper', helper: B },
      { type: 'save-failed', code: 'duplicate_link', message: 'a text link … already exists' },
    );
    expect(d).toMatchObject({ phase: 'error', error: 'a text link … already exists' });
    expect(linkDraftReducer(d, { type: 'flag', flag: 'loadIfUnloaded', value: false })).toMatchObject({
      phase: 'editing',
      error: null,
      loadIfUnloaded: false,
    });
  });
});

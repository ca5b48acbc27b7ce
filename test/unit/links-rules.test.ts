import { describe, expect, it } from 'vitest';
import {
  type LinkCreateInput,
  linkCandidateListSchema,
  linkCreateSchema,
  type NodeModelRecord,
} from '../../src-router/contract';
import {
  type ExistingLink,
  type LinkError,
  LinkStore,
  linkCandidates,
  refreshLinkWeights,
  validateLink,
} from '../../src-router/lending/links';
import { type ClusterEntry, mergeIdentities } from '../../src-router/registry';
import { openStore } from '../../src-router/store';
import { tempDir } from '../support/node-harness';

function rec(localId: string, capabilities: string[], over: Partial<NodeModelRecord> = {}): NodeModelRecord {
  const image = capabilities.includes('image');
  return {
    publicId: localId,
    localId,
    backend: 'sim',
    capabilities,
    lane: image ? 'image' : 'text',
    configHash: `cfg-${localId}`,
    modelHash: null,
    contextsize: image ? null : 4096,
    parallel: image ? null : 1,
    engine: null,
    available: true,
    ...over,
  };
}

const NODES: Record<string, NodeModelRecord[]> = {
  a: [
    rec('sdxl', ['image'], { modelHash: 'H1' }),
    rec('flux', ['image'], { modelHash: 'H2' }),
    rec('llama', ['text'], { modelHash: 'L1' }),
    rec('llava', ['text', 'multimodal'], { modelHash: 'M1' }),
    rec('whisper', ['transcription'], { contextsize: null }),
    rec('llama-par', ['text'], { modelHash: 'L1', parallel: 4 }),
  ],
  b: [
    rec('sdxl-b', ['image'], { modelHash: 'H1' }),
    rec('vid', ['video'], { modelHash: 'V1' }),
    rec('sd-nohash', ['image']),
    rec('llama-b', ['text'], { modelHash: 'L1', parallel: null, contextsize: 8192 }),
    rec('llama-par', ['text'], { modelHash: 'L1', parallel: 4 }),
    rec('llama-noctx', ['text'], { modelHash: 'L1', contextsize: null }),
    rec('llava-b', ['text', 'multimodal'], { modelHash: 'M2' }),
  ],
  c: [rec('qwen', ['text'], { modelHash: 'Q1' }), rec('sdxl', ['image'], { modelHash: 'H1' })],
};

const catalog: ClusterEntry[] = mergeIdentities(
  Object.entries(NODES).map(([nodeId, records]) => ({
    nodeId,
    local: nodeId === 'a',
    healthy: true,
    url: null,
    records,
  })),
  [],
).entries;

const body = (owner: string, helper: string, over: Partial<LinkCreateInput> = {}): LinkCreateInput => {
  const [on, om] = owner.split('/');
  const [hn, hm] = helper.split('/');
  return { owner: { node_id: on, model: om }, helper: { node_id: hn, model: hm }, ...over };
};

function error(input: LinkCreateInput, lane: 'image' | 'text', existing: ExistingLink[] = []): LinkError {
  const r = validateLink(input, lane, catalog, existing);
  if (r.ok) throw new Error('expected a validation error');
  return r.error;
}

describe('link body schemas', () => {
  it('defaults the flags and is strict', () => {
    expect(linkCreateSchema.parse(body('a/sdxl', 'b/sdxl-b'))).toEqual({
      ...body('a/sdxl', 'b/sdxl-b'),
      load_if_unloaded: true,
      restore_after_borrow: false,
    });
    expect(linkCreateSchema.safeParse({ ...body('a/sdxl', 'b/sdxl-b'), lane: 'image' }).success).toBe(false);
    expect(
      linkCreateSchema.safeParse({
        owner: { node_id: 'a', model: 'sdxl', extra: 1 },
        helper: { node_id: 'b', model: 'x' },
      }).success,
    ).toBe(false);
  });
});

describe('validateLink', () => {
  it('accepts a same-weights image link with its flags, without acknowledgement', () => {
    const r = validateLink(
      linkCreateSchema.parse(body('a/sdxl', 'b/sdxl-b', { restore_after_borrow: true })),
      'image',
      catalog,
      [],
    );
    expect(r).toEqual({
      ok: true,
      value: {
        lane: 'image',
        owner: { nodeId: 'a', model: 'sdxl' },
        helper: { nodeId: 'b', model: 'sdxl-b' },
        loadIfUnloaded: true,
        restoreAfterBorrow: true,
        weights: 'same',
        acknowledged: false,
      },
    });
  });

  it('404 model_not_found for an unknown end, naming it', () => {
    expect(error(body('a/nope', 'b/sdxl-b'), 'image')).toMatchObject({
      status: 404,
      code: 'model_not_found',
      field: 'owner',
    });
    expect(error(body('a/sdxl', 'x/sdxl'), 'image')).toMatchObject({
      status: 404,
      code: 'model_not_found',
      field: 'helper',
    });
  });

  it('400 self_link and 400 same_node: a link lends to another node', () => {
    expect(error(body('a/sdxl', 'a/sdxl'), 'image')).toMatchObject({ status: 400, code: 'self_link', field: 'helper' });
    const e = error(body('a/sdxl', 'a/flux', { acknowledge_different_weights: true }), 'image');
    expect(e).toMatchObject({ status: 400, code: 'same_node', field: 'helper' });
    expect(e.message).toContain('another node');
  });

  it('400 wrong_lane: image links join image/video models, text links text models', () => {
    expect(error(body('a/llama', 'b/llama-b'), 'image')).toMatchObject({
      status: 400,
      code: 'wrong_lane',
      field: 'owner',
    });
    expect(error(body('a/sdxl', 'b/llama-b'), 'image')).toMatchObject({
      status: 400,
      code: 'wrong_lane',
      field: 'helper',
    });
    expect(error(body('a/sdxl', 'b/sdxl-b'), 'text')).toMatchObject({
      status: 400,
      code: 'wrong_lane',
      field: 'owner',
    });
    expect(error(body('a/whisper', 'b/llama-b'), 'text')).toMatchObject({
      status: 400,
      code: 'wrong_lane',
      field: 'owner',
    });
    expect(
      validateLink(body('a/sdxl', 'b/vid', { acknowledge_different_weights: true }), 'image', catalog, []).ok,
    ).toBe(true);
  });

  it('400 ineligible (LLM-1) naming the reason: concurrent serving, no context window', () => {
    const par = error(body('a/llama', 'b/llama-par'), 'text');
    expect(par).toMatchObject({ status: 400, code: 'ineligible', field: 'helper' });
    expect(par.message).toMatch(/serves 4 requests at once/);
    expect(error(body('a/llama-par', 'b/llama-b'), 'text')).toMatchObject({
      status: 400,
      code: 'ineligible',
      field: 'owner',
    });
    const noctx = error(body('a/llama', 'b/llama-noctx'), 'text');
    expect(noctx).toMatchObject({ status: 400, code: 'ineligible', field: 'helper' });
    expect(noctx.message).toMatch(/context window/);
    // parallel unset and a stated window: eligible.
    expect(validateLink(body('a/llama', 'b/llama-b'), 'text', catalog, [])).toMatchObject({
      ok: true,
      value: { weights: 'same' },
    });
  });

  it('400 multimodal_mismatch: multimodal links only with multimodal', () => {
    expect(error(body('a/llava', 'b/llama-b'), 'text')).toMatchObject({ status: 400, code: 'multimodal_mismatch' });
    expect(error(body('a/llama', 'b/llava-b'), 'text')).toMatchObject({ status: 400, code: 'multimodal_mismatch' });
    expect(
      validateLink(body('a/llava', 'b/llava-b', { acknowledge_different_weights: true }), 'text', catalog, []).ok,
    ).toBe(true);
  });

  it('409 duplicate_link; the reverse direction is a separate link (LINK-1)', () => {
    const existing: ExistingLink[] = [
      {
        lane: 'image',
        owner: { nodeId: 'a', model: 'sdxl' },
        helper: { nodeId: 'b', model: 'sdxl-b' },
        weights: 'same',
        acknowledged: false,
      },
    ];
    expect(error(body('a/sdxl', 'b/sdxl-b'), 'image', existing)).toMatchObject({ status: 409, code: 'duplicate_link' });
    expect(validateLink(body('b/sdxl-b', 'a/sdxl'), 'image', catalog, existing).ok).toBe(true);
  });

  it('409 acknowledgement_required for the first link to a different-weights helper model only', () => {
    const e = error(body('a/flux', 'b/sdxl-b'), 'image');
    expect(e).toMatchObject({ status: 409, code: 'acknowledgement_required', field: 'acknowledge_different_weights' });
    expect(e.message).toMatch(/different output for the same model ID/);
    // A null hash on either side counts as different, and says so.
    const unknown = error(body('a/sdxl', 'b/sd-nohash'), 'image');
    expect(unknown.code).toBe('acknowledgement_required');
    expect(unknown.message).toMatch(/sd-nohash on b is not known/);

    const first = validateLink(
      body('a/flux', 'b/sdxl-b', { acknowledge_different_weights: true }),
      'image',
      catalog,
      [],
    );
    expect(first).toMatchObject({ ok: true, value: { weights: 'different', acknowledged: true } });
    const stored = first.ok ? [first.value] : [];
    // Later links to that same helper model do not ask again.
    expect(validateLink(body('c/sdxl', 'b/sdxl-b'), 'image', catalog, stored)).toMatchObject({
      ok: true,
      value: { weights: 'same', acknowledged: false },
    });
    // Another helper model still asks.
    expect(error(body('a/sdxl', 'b/vid'), 'image', stored).code).toBe('acknowledgement_required');
    // …but the reverse direction (a new helper model) asks.
    expect(error(body('b/sdxl-b', 'a/flux'), 'image', stored).code).toBe('acknowledgement_required');
    // A different-weights owner to the acknowledged helper: no question, stored as acknowledged.
    const viaAck = [{ ...stored[0], owner: { nodeId: 'c', model: 'qwen' } }];
    expect(validateLink(body('a/flux', 'b/sdxl-b'), 'image', catalog, [])).toMatchObject({ ok: false });
    expect(validateLink(body('a/flux', 'b/sdxl-b'), 'image', catalog, viaAck)).toMatchObject({
      ok: true,
      value: { weights: 'different', acknowledged: true },
    });
  });
});

describe('linkCandidates (UI-3)', () => {
  it('lists every model of the lane on other nodes, labelled, ineligible ones disabled with the reason', () => {
    const r = linkCandidates({ nodeId: 'a', model: 'llama' }, 'text', catalog, []);
    if (!r.ok) throw new Error(r.error.message);
    linkCandidateListSchema.parse(r.value);
    expect(r.value.anchor).toEqual({ node_id: 'a', model: 'llama', public_id: 'llama', model_hash: 'L1' });
    const byKey = Object.fromEntries(r.value.candidates.map((c) => [`${c.node_id}/${c.model}`, c]));
    expect(Object.keys(byKey)).toEqual(['b/llama-b', 'b/llama-noctx', 'b/llama-par', 'b/llava-b', 'c/qwen']);
    expect(byKey['b/llama-b']).toMatchObject({
      label: 'same weights',
      weights: 'same',
      disabled: false,
      reason: null,
      acknowledgement_required: false,
    });
    expect(byKey['b/llama-par']).toMatchObject({
      label: 'same weights',
      disabled: true,
      code: 'ineligible',
      acknowledgement_required: false,
    });
    expect(byKey['b/llama-par'].reason).toMatch(/serves 4 requests at once/);
    expect(byKey['b/llama-noctx']).toMatchObject({ disabled: true, code: 'ineligible' });
    expect(byKey['b/llama-noctx'].reason).toMatch(/context window/);
    expect(byKey['b/llava-b']).toMatchObject({
      label: 'different weights',
      disabled: true,
      code: 'multimodal_mismatch',
    });
    expect(byKey['c/qwen']).toMatchObject({
      label: 'different weights',
      disabled: false,
      code: 'acknowledgement_required',
      acknowledgement_required: true,
    });
    expect(byKey['c/qwen'].reason).toMatch(/different output/);
  });

  it('marks existing links disabled and drops the acknowledgement once the helper model was acknowledged', () => {
    const existing: ExistingLink[] = [
      {
        lane: 'image',
        owner: { nodeId: 'a', model: 'sdxl' },
        helper: { nodeId: 'b', model: 'sdxl-b' },
        weights: 'same',
        acknowledged: false,
      },
      {
        lane: 'image',
        owner: { nodeId: 'c', model: 'sdxl' },
        helper: { nodeId: 'b', model: 'vid' },
        weights: 'different',
        acknowledged: true,
      },
    ];
    const r = linkCandidates({ nodeId: 'a', model: 'sdxl' }, 'image', catalog, existing);
    if (!r.ok) throw new Error(r.error.message);
    const byKey = Object.fromEntries(r.value.candidates.map((c) => [`${c.node_id}/${c.model}`, c]));
    expect(Object.keys(byKey)).toEqual(['b/sd-nohash', 'b/sdxl-b', 'b/vid', 'c/sdxl']);
    expect(byKey['b/sdxl-b']).toMatchObject({ disabled: true, code: 'duplicate_link' });
    expect(byKey['b/vid']).toMatchObject({
      label: 'different weights',
      disabled: false,
      acknowledgement_required: false,
      reason: null,
    });
    expect(byKey['b/sd-nohash']).toMatchObject({ label: 'different weights', acknowledgement_required: true });
    expect(byKey['c/sdxl']).toMatchObject({ label: 'same weights', disabled: false });
  });

  it('as helper anchor lists owners; an ineligible anchor disables every candidate with its reason; bad anchors fail', () => {
    const asHelper = linkCandidates({ nodeId: 'b', model: 'llama-b' }, 'text', catalog, [], 'helper');
    if (!asHelper.ok) throw new Error(asHelper.error.message);
    expect(asHelper.value.candidates.map((c) => [c.model, c.disabled])).toEqual([
      ['llama', false],
      ['llama-par', true],
      ['llava', true],
      ['qwen', false],
    ]);
    const ineligible = linkCandidates({ nodeId: 'a', model: 'llama-par' }, 'text', catalog, []);
    if (!ineligible.ok) throw new Error(ineligible.error.message);
    expect(ineligible.value.candidates.length).toBeGreaterThan(0);
    expect(ineligible.value.candidates.every((c) => c.disabled && c.reason !== null)).toBe(true);
    expect(linkCandidates({ nodeId: 'a', model: 'nope' }, 'text', catalog, [])).toMatchObject({
      ok: false,
      error: { status: 404, code: 'model_not_found' },
    });
    expect(linkCandidates({ nodeId: 'a', model: 'sdxl' }, 'text', catalog, [])).toMatchObject({
      ok: false,
      error: { status: 400, code: 'wrong_lane' },
    });
  });
});

describe('refreshLinkWeights', () => {
  it('recomputes stored weights from the catalog, leaving links with unknown ends alone', () => {
    const s = new LinkStore(openStore(tempDir()));
    const known = s.create({
      lane: 'image',
      owner: { nodeId: 'a', model: 'sdxl' },
      helper: { nodeId: 'b', model: 'sdxl-b' },
      loadIfUnloaded: true,
      restoreAfterBorrow: false,
      weights: 'different',
      acknowledged: true,
    });
    const gone = s.create({
      lane: 'image',
      owner: { nodeId: 'a', model: 'sdxl' },
      helper: { nodeId: 'z', model: 'x' },
      loadIfUnloaded: true,
      restoreAfterBorrow: false,
      weights: 'different',
      acknowledged: true,
    });
    expect(refreshLinkWeights(s, catalog)).toBe(1);
    expect(s.get(known.id)?.weights).toBe('same');
    expect(s.get(gone.id)?.weights).toBe('different');
    expect(s.version()).toBe(3);
    expect(refreshLinkWeights(s, catalog)).toBe(0);
    expect(s.version()).toBe(3);
  });
});

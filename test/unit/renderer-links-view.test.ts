import { describe, expect, it } from 'vitest';
import {
  anchorOptions,
  candidateViews,
  endKey,
  fitsLane,
  LANES,
  linkRows,
} from '../../src-renderer/src/links/links-view';
import type { ClusterModel, LinkCandidateList, LinkRecord } from '../../src-router/contract';

// The Links screen's pure parts (UI-3, LINK-1..4): lanes, anchors, candidate labels and disabled reasons, rows.

const model = (id: string, capabilities: string[], replicas: [string, string][]): ClusterModel => ({
  id,
  baseId: id,
  capabilities,
  configHash: 'c',
  modelHash: null,
  replicas: replicas.map(([nodeId, localId]) => ({ nodeId, localId, available: true })),
});

const candidates: LinkCandidateList = {
  lane: 'text',
  anchor: { node_id: 'master', model: 'a', public_id: 'model-a', model_hash: 'h1' },
  anchor_role: 'owner',
  candidates: [
    {
      node_id: 'gpu-b',
      model: 'same',
      public_id: 'model-a',
      weights: 'same',
      label: 'same weights',
      disabled: false,
      reason: null,
      code: null,
      acknowledgement_required: false,
    },
    {
      node_id: 'gpu-b',
      model: 'b',
      public_id: 'model-b',
      weights: 'different',
      label: 'different weights',
      disabled: false,
      reason: 'b on gpu-b does not have the same weights as a on master',
      code: 'acknowledgement_required',
      acknowledgement_required: true,
    },
    {
      node_id: 'gpu-b',
      model: 'wide',
      public_id: 'wide',
      weights: 'different',
      label: 'different weights',
      disabled: true,
      reason: 'helper wide on gpu-b is not eligible for an LLM link: it serves 4 requests at once',
      code: 'ineligible',
      acknowledgement_required: false,
    },
    {
      node_id: 'gpu-c',
      model: 'x',
      public_id: 'x',
      weights: 'same',
      label: 'same weights',
      disabled: true,
      reason: null,
      code: 'duplicate_link',
      acknowledgement_required: false,
    },
  ],
};

describe('lanes and anchors', () => {
  it('two lanes at their site API paths (LINK-2)', () => {
    expect(LANES.map((l) => [l.lane, l.path])).toEqual([
      ['text', '/router/v1/site/text-routing-groups'],
      ['image', '/router/v1/site/routing-groups'],
    ]);
  });

  it('a model is in a lane by its capabilities: text/multimodal, image/video', () => {
    expect(fitsLane(['text'], 'text')).toBe(true);
    expect(fitsLane(['multimodal'], 'text')).toBe(true);
    expect(fitsLane(['image'], 'text')).toBe(false);
    expect(fitsLane(['video'], 'image')).toBe(true);
    expect(fitsLane(['embedding'], 'image')).toBe(false);
    expect(fitsLane([], 'text')).toBe(false);
  });

  it('anchors: every replica of every lane model, by node then local ID; the public ID when it differs', () => {
    const models = [
      model(
        'model-a',
        ['text'],
        [
          ['master', 'a'],
          ['gpu-b', 'a'],
        ],
      ),
      model('img', ['image'], [['master', 'img']]),
      model('b', ['text'], [['gpu-b', 'b']]),
    ];
    expect(anchorOptions(models, 'text').map((a) => a.label)).toEqual([
      'a on gpu-b (model-a)',
      'b on gpu-b',
      'a on master (model-a)',
    ]);
    expect(anchorOptions(models, 'image').map((a) => a.end)).toEqual([{ node_id: 'master', model: 'img' }]);
    expect(anchorOptions(null, 'text')).toEqual([]);
  });

  it('picker values are unambiguous whatever the IDs hold', () => {
    expect(endKey({ node_id: 'a/b', model: 'c' })).not.toBe(endKey({ node_id: 'a', model: 'b/c' }));
    expect(JSON.parse(endKey({ node_id: 'n', model: 'm' }))).toEqual(['n', 'm']);
  });
});

describe('candidates (UI-3, LINK-3, LLM-1)', () => {
  const views = candidateViews(candidates);

  it('every candidate is listed, in the node’s order: none omitted, ineligible ones included', () => {
    expect(views.map((v) => v.label)).toEqual(['same on gpu-b', 'b on gpu-b', 'wide on gpu-b', 'x on gpu-c']);
  });

  it('labelled same or different weights', () => {
    expect(views.map((v) => [v.weights, v.weightsTone])).toEqual([
      ['same weights', 'ok'],
      ['different weights', 'busy'],
      ['different weights', 'busy'],
      ['same weights', 'ok'],
    ]);
  });

  it('ineligible ones disabled with the node’s reason (a code when it gave none); enabled ones carry no reason', () => {
    expect(views.map((v) => [v.disabled, v.reason])).toEqual([
      [false, null],
      [false, null],
      [true, 'helper wide on gpu-b is not eligible for an LLM link: it serves 4 requests at once'],
      [true, 'cannot be linked (duplicate_link)'],
    ]);
  });

  it('whether saving needs the different-weights acknowledgement', () => {
    expect(views.map((v) => v.needsAck)).toEqual([false, true, false, false]);
  });

  it('no answer yet: nothing to pick', () => {
    expect(candidateViews(null)).toEqual([]);
  });
});

describe('stored links', () => {
  const link = (over: Partial<LinkRecord>): LinkRecord => ({
    id: 'l1',
    lane: 'text',
    owner: { node_id: 'master', model: 'a' },
    helper: { node_id: 'gpu-b', model: 'b' },
    load_if_unloaded: true,
    restore_after_borrow: false,
    weights: 'different',
    acknowledged: true,
    created_at: '2025-01-02T12:00:00.000Z',
    updated_at: '2025-01-02T12:00:00.000Z',
    ...over,
  });

  it('one-way pair, weights with the acknowledgement, both flags', () => {
    const [r] = linkRows([link({})]);
    expect(r).toMatchObject({
      owner: 'a on master',
      helper: 'b on gpu-b',
      weights: 'different weights · acknowledged',
      weightsTone: 'busy',
      loadIfUnloaded: true,
      restoreAfterBorrow: false,
    });
    expect(r.created).toMatch(/^2025-01-0\d \d{2}:\d{2}:\d{2}$/);
    expect(linkRows([link({ weights: 'same', acknowledged: false, restore_after_borrow: true })])[0]).toMatchObject({
      weights: 'same weights',
      weightsTone: 'ok',
      restoreAfterBorrow: true,
    });
    expect(linkRows([link({ created_at: 'garbled' })])[0].created).toBe('garbled');
  });
});

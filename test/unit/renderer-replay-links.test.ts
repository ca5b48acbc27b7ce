import { describe, expect, it } from 'vitest';
import { createConsoleClient, type FetchLike } from '../../src-renderer/src/api/console-client';
import {
  addLink,
  linkChanges,
  linksOfEdit,
  recordedLinkRows,
  removeLink,
  replayModelOptions,
} from '../../src-renderer/src/lending/replay-links';
import { changedSettings, emptyReplayDraft, replayRequestOf } from '../../src-renderer/src/lending/replay-view';
import { createAppStore } from '../../src-renderer/src/store/app-store';
import type { ClusterModel, LinkList } from '../../src-router/contract';
import { replayRequestSchema } from '../../src-router/contract/replay';

// The Replay card's links editor, pure: the recorded links as rows, the cluster's models as options, adding (each
// refusal named by its field before anything is asked) and removing, what changed, and the request's `links`.

const NOW = 1_700_000_000_000;
const linkList = (links: [string, string, string, string][], lane: 'text' | 'image' = 'text'): LinkList => ({
  version: 3,
  links: links.map(([on, om, hn, hm], i) => ({
    id: `L${i}`,
    lane,
    owner: { node_id: on, model: om },
    helper: { node_id: hn, model: hm },
    load_if_unloaded: true,
    restore_after_borrow: i === 1,
    weights: 'different',
    acknowledged: true,
    created_at: '',
    updated_at: '',
  })),
});
const model = (id: string, capabilities: string[], replicas: [string, string][]): ClusterModel => ({
  id,
  baseId: id,
  capabilities,
  replicas: replicas.map(([nodeId, localId]) => ({ nodeId, localId, available: true })),
  configHash: 'h',
  modelHash: null,
});
const models = [
  model('model-a', ['text'], [['master', 'a']]),
  model(
    'model-b',
    ['text'],
    [
      ['gpu-b', 'b'],
      ['gpu-c', 'b'],
    ],
  ),
  model('sdxl', ['image'], [['gpu-b', 'sd']]),
  model('whisper', ['transcription'], [['gpu-b', 'w']]),
];
const options = replayModelOptions(models);
const recorded = recordedLinkRows({ text: linkList([['master', 'a', 'gpu-b', 'b']]), image: linkList([], 'image') });

describe('replay links: rows and options', () => {
  it('the recorded links become rows keyed by lane and pair, with their flags', () => {
    const rows = recordedLinkRows({
      text: linkList([
        ['master', 'a', 'gpu-b', 'b'],
        ['master', 'a', 'gpu-c', 'b'],
      ]),
      image: linkList([['gpu-b', 'sd', 'master', 'sd']], 'image'),
    });
    expect(rows.map((r) => r.key)).toEqual([
      'text:master/a>gpu-b/b',
      'text:master/a>gpu-c/b',
      'image:gpu-b/sd>master/sd',
    ]);
    expect(rows[1]).toMatchObject({
      lane: 'text',
      owner: { nodeId: 'master', model: 'a' },
      helper: { nodeId: 'gpu-c', model: 'b' },
      loadIfUnloaded: true,
      restoreAfterBorrow: true,
    });
  });

  it('offers every linkable model of the cluster once per node, with its lane (a transcription model is not linkable)', () => {
    expect(options.map((o) => [o.value, o.lane])).toEqual([
      ['master/a', 'text'],
      ['gpu-b/b', 'text'],
      ['gpu-c/b', 'text'],
      ['gpu-b/sd', 'image'],
    ]);
    expect(options[0].label).toBe('a on master (text)');
    expect(replayModelOptions(null)).toEqual([]);
  });
});

describe('replay links: adding and removing', () => {
  it('adds owner → helper as a text link that may load, restoring nothing', () => {
    const r = addLink(recorded, { owner: 'master/a', helper: 'gpu-c/b' }, options);
    expect(r.ok && r.links.map((l) => l.key)).toEqual(['text:master/a>gpu-b/b', 'text:master/a>gpu-c/b']);
    expect(r.ok && r.links[1]).toMatchObject({ lane: 'text', loadIfUnloaded: true, restoreAfterBorrow: false });
  });

  it('names the field of a pick that cannot be a link', () => {
    const refused = (owner: string, helper: string) => {
      const r = addLink(recorded, { owner, helper }, options);
      return r.ok ? null : [r.field, r.message];
    };
    expect(refused('', 'gpu-b/b')).toEqual(['links.owner', expect.stringMatching(/owner/)]);
    expect(refused('gone/x', 'gpu-b/b')).toEqual(['links.owner', expect.stringMatching(/gone\/x/)]);
    expect(refused('master/a', '')).toEqual(['links.helper', expect.stringMatching(/helper/)]);
    expect(refused('gpu-b/b', 'gpu-b/sd')).toEqual(['links.helper', expect.stringMatching(/another node/)]);
    expect(refused('master/a', 'gpu-b/sd')?.[0]).toBe('links.helper');
    expect(refused('master/a', 'gpu-b/sd')?.[1]).toMatch(/image model.*text one/);
    expect(refused('master/a', 'gpu-b/b')).toEqual(['links.helper', expect.stringMatching(/already/)]);
  });

  it('removes by key; the changes say what was removed and added, or no links', () => {
    const added = addLink(recorded, { owner: 'gpu-c/b', helper: 'master/a' }, options);
    expect(added.ok).toBe(true);
    const current = removeLink(added.ok ? added.links : [], 'text:master/a>gpu-b/b');
    expect(linkChanges({ recorded, current })).toEqual(['−a on master → b on gpu-b', '+b on gpu-c → a on master']);
    expect(linkChanges({ recorded, current: [] })).toEqual(['no links']);
    expect(linkChanges({ recorded, current: recorded })).toEqual([]);
    expect(linkChanges(null)).toEqual([]);
  });
});

describe('replay links: the request', () => {
  it('sends no links while the list is the recorded one, else the whole list as the replay takes it', () => {
    expect(linksOfEdit(null)).toBeUndefined();
    expect(linksOfEdit({ recorded, current: [...recorded] })).toBeUndefined();
    expect(linksOfEdit({ recorded, current: [] })).toEqual([]);
    const added = addLink([], { owner: 'master/a', helper: 'gpu-c/b' }, options);
    const edit = { recorded, current: added.ok ? added.links : [] };
    const r = replayRequestOf({ ...emptyReplayDraft(), links: edit }, NOW);
    expect(r.ok && r.request.links).toEqual([
      {
        lane: 'text',
        owner: { nodeId: 'master', model: 'a' },
        helper: { nodeId: 'gpu-c', model: 'b' },
        loadIfUnloaded: true,
        restoreAfterBorrow: false,
      },
    ]);
    expect(replayRequestSchema.safeParse(r.ok && r.request).success).toBe(true);
    expect(changedSettings({ ...emptyReplayDraft(), settings: { offload_probe_idle: '1h' }, links: edit })).toEqual([
      'offload_probe_idle=1h',
      '−a on master → b on gpu-b',
      '+a on master → b on gpu-c',
    ]);
  });
});

describe('replay slice: links', () => {
  function setup() {
    const bodies: unknown[] = [];
    const fetch: FetchLike = async (_url, init) => {
      bodies.push(JSON.parse(String(init?.body)));
      return new Response('{}', { status: 500 });
    };
    const store = createAppStore('http://127.0.0.1:8080', {
      client: createConsoleClient({ url: 'http://127.0.0.1:8080', token: 't', fetch }),
      now: () => NOW,
    });
    return { store, bodies };
  }
  const loaded = (store: ReturnType<typeof setup>['store']) =>
    store.setState((s) => ({
      links: {
        text: { ...s.links.text, list: linkList([['master', 'a', 'gpu-b', 'b']]) },
        image: { ...s.links.image, list: linkList([], 'image') },
      },
      cluster: { ...s.cluster, models },
    }));

  it('edits start from the recorded links; a bad pick is named without asking the node and clears once fixed', async () => {
    const { store, bodies } = setup();
    store.getState().removeReplayLink('text:master/a>gpu-b/b');
    expect(store.getState().replay.failure).toMatchObject({ param: 'links' });
    loaded(store);
    store.getState().setReplayDraft({ linkPick: { owner: 'master/a', helper: 'master/a' } });
    store.getState().addReplayLink();
    expect(store.getState().replay.failure).toMatchObject({ kind: 'invalid', param: 'links.helper' });
    expect(store.getState().replay.draft.links).toBeNull();
    expect(bodies).toHaveLength(0);
    store.getState().setReplayDraft({ linkPick: { helper: 'gpu-c/b' } });
    store.getState().addReplayLink();
    expect(store.getState().replay.failure).toBeNull();
    expect(store.getState().replay.draft.linkPick).toEqual({ owner: '', helper: '' });
    store.getState().removeReplayLink('text:master/a>gpu-b/b');
    expect(store.getState().replay.draft.links?.current.map((l) => l.key)).toEqual(['text:master/a>gpu-c/b']);
    await store.getState().runReplay();
    expect((bodies[0] as { links: unknown[] }).links).toHaveLength(1);
    store.getState().clearReplayLinks();
    await store.getState().runReplay();
    expect((bodies[1] as { links: unknown[] }).links).toEqual([]);
    store.getState().resetReplayLinks();
    expect(store.getState().replay.draft.links).toBeNull();
    await store.getState().runReplay();
    expect(bodies[2]).not.toHaveProperty('links');
  });
});

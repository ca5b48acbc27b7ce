import { describe, expect, it } from 'vitest';
import { guardianSettingSchema, guardiansPushSchema, guardiansViewSchema } from '../../src-router/contract';
import {
  fromPushed,
  type GuardianRule,
  GuardianStore,
  guardiansView,
  pushedSettings,
  resolveGuardian,
  toGuardianSetting,
} from '../../src-router/guardian';
import type { ClusterEntry } from '../../src-router/registry';
import { openStore } from '../../src-router/store';
import { tempDir } from '../support/node-harness';

// Guardian settings in SQLite (GUARD-1): one row per scope and target, guardians_version bumped on every change,
// replaceAll for a slave's pushed copy; and the pure wire conversions (view, push for one slave, a slave's copy).

function store(): GuardianStore {
  let t = 1_000;
  return new GuardianStore(openStore(tempDir()), () => (t += 10));
}

const VL = { nodeId: 'master', model: 'vl' };
const VL_B = { nodeId: 'gpu-b', model: 'vl-b' };
const cluster = (guardian = VL): GuardianRule => ({ scope: 'cluster', nodeId: null, model: null, guardian });
const node = (nodeId: string, guardian = VL): GuardianRule => ({ scope: 'node', nodeId, model: null, guardian });
const model = (nodeId: string, m: string, guardian = VL): GuardianRule => ({
  scope: 'model',
  nodeId,
  model: m,
  guardian,
});

const record = (localId: string, capabilities: string[]) => ({
  publicId: localId,
  localId,
  backend: 'sim',
  capabilities,
  lane: 'text' as const,
  configHash: 'h',
  modelHash: null,
  contextsize: 4096,
  parallel: 1,
  engine: null,
  available: true,
});
const entry = (id: string, nodeId: string, localId: string, capabilities: string[]): ClusterEntry =>
  ({
    id,
    baseId: id,
    replicas: [
      {
        nodeId,
        local: nodeId === 'master',
        healthy: true,
        url: nodeId === 'master' ? null : `http://${nodeId}`,
        record: record(localId, capabilities),
      },
    ],
  }) as unknown as ClusterEntry;
const CATALOG = [
  entry('model-a', 'master', 'a', ['text']),
  entry('model-vl', 'master', 'vl', ['text', 'multimodal']),
  entry('model-b', 'gpu-b', 'b', ['text']),
  entry('model-vl-b', 'gpu-b', 'vl-b', ['text', 'multimodal']),
];

describe('GuardianStore', () => {
  it('stores one setting per scope and target, bumping the version on every change and never on a repeat', () => {
    const s = store();
    expect(s.version()).toBe(0);
    expect(s.list()).toEqual([]);
    const c = s.put(cluster());
    expect(c).toMatchObject({
      scope: 'cluster',
      nodeId: null,
      model: null,
      guardian: VL,
      url: null,
      publicId: null,
      updatedAt: 1_010,
    });
    expect(s.version()).toBe(1);
    s.put(model('gpu-b', 'b', VL_B));
    s.put(node('gpu-b', VL_B));
    expect(s.version()).toBe(3);
    // Least specific first.
    expect(s.list().map((r) => [r.scope, r.nodeId, r.model])).toEqual([
      ['cluster', null, null],
      ['node', 'gpu-b', null],
      ['model', 'gpu-b', 'b'],
    ]);
    // The same guardian again: nothing changes.
    expect(s.put(cluster())).toEqual(c);
    expect(s.version()).toBe(3);
    // Another guardian for the same scope replaces the row.
    expect(s.put(cluster(VL_B)).guardian).toEqual(VL_B);
    expect(s.list().filter((r) => r.scope === 'cluster')).toHaveLength(1);
    expect(s.version()).toBe(4);
    expect(s.get({ scope: 'model', nodeId: 'gpu-b', model: 'b' })?.guardian).toEqual(VL_B);
    expect(s.get({ scope: 'model', nodeId: 'gpu-b', model: 'zz' })).toBeUndefined();
  });

  it('deletes by scope keys; an unknown setting is false and bumps nothing', () => {
    const s = store();
    s.put(cluster());
    s.put(node('gpu-b'));
    expect(s.delete({ scope: 'node', nodeId: 'gpu-c', model: null })).toBe(false);
    expect(s.version()).toBe(2);
    expect(s.delete({ scope: 'node', nodeId: 'gpu-b', model: null })).toBe(true);
    expect(s.version()).toBe(3);
    expect(s.delete({ scope: 'cluster', nodeId: null, model: null })).toBe(true);
    expect(s.list()).toEqual([]);
  });

  it('replaceAll makes the store exactly the push at its version; the same push again changes nothing', () => {
    const s = store();
    s.put(node('gpu-c'));
    const pushed = [
      { ...cluster(VL_B), url: 'http://gpu-b', publicId: 'model-vl-b' },
      { ...model('master', 'a'), url: null, publicId: 'model-vl' },
    ];
    expect(s.replaceAll(7, pushed)).toBe(true);
    expect(s.version()).toBe(7);
    expect(s.list().map(({ updatedAt: _, ...r }) => r)).toEqual(pushed);
    const before = s.list();
    expect(s.replaceAll(7, pushed)).toBe(false);
    expect(s.list()).toEqual(before);
    // The master's version wins even when lower (a master whose store was reset).
    expect(s.replaceAll(2, [])).toBe(true);
    expect(s.version()).toBe(2);
    expect(s.list()).toEqual([]);
  });

  it('keeps its settings across a reopen of the store', () => {
    const dir = tempDir();
    new GuardianStore(openStore(dir)).put(model('gpu-b', 'b'));
    const again = new GuardianStore(openStore(dir));
    expect(again.list().map((r) => r.guardian)).toEqual([VL]);
    expect(again.version()).toBe(1);
  });
});

describe('guardian wire forms', () => {
  it('the view lists settings, the effective guardian of every text-only model and why, candidates and nodes', () => {
    const s = store();
    s.put(cluster());
    s.put(model('gpu-b', 'b', VL_B));
    const view = guardiansViewSchema.parse(guardiansView(s.version(), s.list(), CATALOG, 'master'));
    expect(view.version).toBe(2);
    expect(view.settings.map((x) => guardianSettingSchema.parse(x).scope)).toEqual(['cluster', 'model']);
    expect(view.settings[0]).toEqual(toGuardianSetting(s.list()[0]));
    // By node, then model.
    expect(view.effective).toEqual([
      {
        node_id: 'gpu-b',
        model: 'b',
        public_id: 'model-b',
        guardian: { node_id: 'gpu-b', model: 'vl-b' },
        from: 'model',
        available: true,
      },
      {
        node_id: 'master',
        model: 'a',
        public_id: 'model-a',
        guardian: { node_id: 'master', model: 'vl' },
        from: 'cluster',
        available: true,
      },
    ]);
    expect(view.candidates.map((c) => c.public_id)).toEqual(['model-vl', 'model-vl-b']);
    expect(view.nodes).toEqual(['master', 'gpu-b']);
    // A guardian whose node left the catalog: still in force, not available.
    expect(guardiansView(2, s.list(), CATALOG.slice(0, 2), 'master').effective).toEqual([
      {
        node_id: 'master',
        model: 'a',
        public_id: 'model-a',
        guardian: { node_id: 'master', model: 'vl' },
        from: 'cluster',
        available: true,
      },
    ]);
  });

  it('a push for one slave carries each guardian URL (null for the receiver itself) and public ID', () => {
    const rules = [cluster(), model('gpu-b', 'b', VL_B)];
    const urls: Record<string, string | null> = { master: null, 'gpu-b': 'http://gpu-b' };
    const settings = pushedSettings(rules, CATALOG, 'gpu-b', (n) => urls[n] ?? null);
    expect(guardiansPushSchema.parse({ version: 3, epoch: 'master:1', settings }).settings).toEqual([
      {
        scope: 'cluster',
        node_id: null,
        model: null,
        guardian: { node_id: 'master', model: 'vl' },
        guardian_url: null,
        guardian_public_id: 'model-vl',
      },
      {
        scope: 'model',
        node_id: 'gpu-b',
        model: 'b',
        guardian: { node_id: 'gpu-b', model: 'vl-b' },
        guardian_url: null,
        guardian_public_id: 'model-vl-b',
      },
    ]);
    expect(pushedSettings(rules, CATALOG, 'gpu-c', (n) => urls[n] ?? null).map((p) => p.guardian_url)).toEqual([
      null,
      'http://gpu-b',
    ]);
  });

  it("a slave's copy: a guardian on the master pushed without a URL answers at the master URL the slave knows", () => {
    const [onMaster, onSelf] = pushedSettings([cluster(), model('gpu-b', 'b', VL_B)], CATALOG, 'gpu-b', () => null);
    const master = { nodeId: 'master', url: 'http://master:1' };
    expect(fromPushed(onMaster, 'gpu-b', master)).toEqual({
      ...cluster(),
      url: 'http://master:1',
      publicId: 'model-vl',
    });
    expect(fromPushed(onSelf, 'gpu-b', master)).toEqual({
      ...model('gpu-b', 'b', VL_B),
      url: null,
      publicId: 'model-vl-b',
    });
    expect(fromPushed({ ...onMaster, guardian_url: 'http://public-master' }, 'gpu-b', master).url).toBe(
      'http://public-master',
    );
  });

  it('the directory answer: the most specific setting with its URL and public ID; none is null', () => {
    const rules = [
      { ...cluster(), url: 'http://m', publicId: 'model-vl' },
      { ...node('gpu-b', VL_B), url: null, publicId: 'model-vl-b' },
    ];
    const where = { url: (r: (typeof rules)[number]) => r.url, publicId: (r: (typeof rules)[number]) => r.publicId };
    expect(resolveGuardian(rules, { nodeId: 'gpu-b', model: 'b' }, where)).toEqual({
      guardian: VL_B,
      from: 'node',
      url: null,
      publicId: 'model-vl-b',
    });
    expect(resolveGuardian(rules, { nodeId: 'gpu-c', model: 'c' }, where)).toEqual({
      guardian: VL,
      from: 'cluster',
      url: 'http://m',
      publicId: 'model-vl',
    });
    expect(resolveGuardian([], { nodeId: 'gpu-c', model: 'c' }, where)).toBeNull();
  });
});

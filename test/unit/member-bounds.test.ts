import { describe, expect, it } from 'vitest';
import {
  boundLendingState,
  boundSnapshot,
  MEMBER_BOUNDS,
  snapshotRefusal,
} from '../../src-router/cluster/member-bounds';
import type { NodeModelRecord, NodeSnapshot } from '../../src-router/contract';

// What a master takes from one member: records past the bounds are dropped, each kind named once in a warning; a
// snapshot field over its bound refuses the snapshot whole.

const rec = (publicId: string, localId = publicId, o: Partial<NodeModelRecord> = {}): NodeModelRecord => ({
  publicId,
  localId,
  backend: 'sim',
  capabilities: ['text'],
  lane: 'text',
  configHash: 'c1',
  modelHash: null,
  contextsize: null,
  parallel: null,
  engine: null,
  available: true,
  ...o,
});
const snap = (models: NodeModelRecord[], o: Partial<NodeSnapshot> = {}): NodeSnapshot => ({
  nodeId: 's1',
  role: 'slave',
  publicUrl: 'http://s1',
  version: '1',
  settingsHash: 'h',
  startedAt: '2026-01-01T00:00:00.000Z',
  runtimeStatus: true,
  models,
  ...o,
});

describe('member bounds', () => {
  it('a snapshot within the bounds is taken as it is, without warnings', () => {
    const s = snap([rec('a'), rec('b')]);
    expect(boundSnapshot(s)).toEqual({ snapshot: s, warnings: [] });
    expect(snapshotRefusal(s)).toBeNull();
  });

  it('drops records with over-long fields or too many capabilities, naming each reason once', () => {
    const long = 'x'.repeat(MEMBER_BOUNDS.idChars + 1);
    const { snapshot, warnings } = boundSnapshot(
      snap([
        rec(long),
        rec('a', long),
        rec('b', 'b', { configHash: 'h'.repeat(MEMBER_BOUNDS.hashChars + 1) }),
        rec('c', 'c', { capabilities: Array.from({ length: MEMBER_BOUNDS.capabilities + 1 }, (_, i) => `k${i}`) }),
        rec('d', 'd', { capabilities: ['y'.repeat(MEMBER_BOUNDS.capabilityChars + 1)] }),
        rec('e', 'e', { engine: long }),
        rec(long, 'z'),
        rec('ok'),
      ]),
    );
    expect(snapshot.models.map((r) => r.publicId)).toEqual(['ok']);
    expect(warnings).toEqual([
      '2 model records dropped: publicId longer than 256 characters',
      '1 model record dropped: localId longer than 256 characters',
      '1 model record dropped: configHash longer than 128 characters',
      '1 model record dropped: more than 32 capabilities',
      '1 model record dropped: a capability longer than 64 characters',
      '1 model record dropped: engine longer than 256 characters',
    ]);
  });

  it('keeps at most 16 records per public ID and 256 in all, in the order advertised', () => {
    const models = [
      ...Array.from({ length: 20 }, (_, i) => rec('dup', `d${i}`)),
      ...Array.from({ length: 300 }, (_, i) => rec(`m${i}`)),
    ];
    const { snapshot, warnings } = boundSnapshot(snap(models));
    expect(snapshot.models).toHaveLength(MEMBER_BOUNDS.models);
    expect(snapshot.models.filter((r) => r.publicId === 'dup').map((r) => r.localId)).toEqual(
      Array.from({ length: 16 }, (_, i) => `d${i}`),
    );
    expect(snapshot.models.at(-1)?.publicId).toBe('m239');
    expect(warnings).toEqual([
      '4 model records dropped: more than 16 share a public ID',
      'advertised 320 model records; only the first 256 are taken (60 dropped)',
    ]);
  });

  it('refuses a snapshot whose node ID, version, settings hash, start time or URL is over 2,048 characters', () => {
    const long = 'x'.repeat(MEMBER_BOUNDS.fieldChars + 1);
    for (const field of ['nodeId', 'version', 'settingsHash', 'startedAt', 'publicUrl'] as const)
      expect(snapshotRefusal(snap([], { [field]: long }))).toBe(
        `its snapshot's ${field} is longer than 2048 characters`,
      );
  });

  it("takes at most 8 lanes and 256 models of a member's lending state", () => {
    const lanes = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`lane${i}`, null]));
    const models = Array.from({ length: 300 }, (_, i) => ({ model: `m${i}` }));
    const { state, warnings } = boundLendingState({ nodeId: 's1', lanes, models });
    expect(Object.keys(state.lanes)).toHaveLength(8);
    expect(state.models).toHaveLength(256);
    expect(warnings).toEqual([
      'reported 12 lanes; only the first 8 are taken',
      'reported 300 lending models; only the first 256 are taken',
    ]);
    const small = { nodeId: 's1', lanes: { text: null }, models: [] };
    expect(boundLendingState(small)).toEqual({ state: small, warnings: [] });
  });
});

import { describe, expect, it } from 'vitest';
import type { NodeModelRecord } from '../../src-router/contract';
import { carriedAssignments, ClusterCatalog, mergeIdentities, type Assignment, type CarriedAssignment, type NodeRecords } from '../../src-router/registry';

const rec = (publicId: string, localId: string, configHash: string, modelHash: string | null = 'w1', available = true): NodeModelRecord => ({
  publicId, localId, backend: 'sim', capabilities: ['text'], lane: 'text', configHash, modelHash, contextsize: 4096, parallel: 1, engine: null, available,
});
const node = (nodeId: string, records: NodeModelRecord[], o: Partial<NodeRecords> = {}): NodeRecords => ({ nodeId, local: false, healthy: true, url: `http://${nodeId}`, records, ...o });

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
}

describe('identity merge (ID-2)', () => {
  it('same public ID and identical hashes → one model with a replica per node', () => {
    const { entries, added } = mergeIdentities([node('a', [rec('llama', 'l1', 'c1')]), node('b', [rec('llama', 'l7', 'c1')])], []);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ id: 'llama', baseId: 'llama' });
    expect(entries[0].replicas.map((r) => [r.nodeId, r.record.localId])).toEqual([['a', 'l1'], ['b', 'l7']]);
    expect(added).toEqual([{ baseId: 'llama', hashKey: 'c1:w1', clusterId: 'llama' }]);
  });

  it('a different config hash or weights hash gets a numeric suffix', () => {
    const { entries } = mergeIdentities([node('a', [rec('llama', 'x', 'c1')]), node('b', [rec('llama', 'x', 'c2')]), node('c', [rec('llama', 'x', 'c1', 'w2')])], []);
    expect(entries.map((e) => [e.id, e.replicas[0].nodeId])).toEqual([['llama', 'a'], ['llama-2', 'c'], ['llama-3', 'b']]);
  });

  it('the local node keeps the bare ID for its own group', () => {
    const { entries } = mergeIdentities([node('a', [rec('llama', 'x', 'c1')]), node('m', [rec('llama', 'x', 'c9')], { local: true })], []);
    expect(entries.find((e) => e.id === 'llama')!.replicas[0].nodeId).toBe('m');
  });

  it('does not depend on the order nodes were polled in', () => {
    const nodes = [node('a', [rec('m', 'x', 'c1'), rec('n', 'y', 'c5')]), node('b', [rec('m', 'x', 'c2')]), node('c', [rec('m', 'z', 'c3'), rec('n', 'y', 'c5')])];
    const results = permutations(nodes).map((p) => JSON.stringify(mergeIdentities(p, []).entries.map((e) => [e.id, e.replicas.map((r) => r.nodeId)])));
    expect(new Set(results).size).toBe(1);
  });

  it('keeps suffixes stable across restarts and when a group that sorts first appears later', () => {
    const first = mergeIdentities([node('b', [rec('m', 'x', 'c5')]), node('c', [rec('m', 'x', 'c7')])], []);
    expect(first.entries.map((e) => e.id)).toEqual(['m', 'm-2']);
    const prior: Assignment[] = first.added;
    const later = mergeIdentities([node('a', [rec('m', 'x', 'c0')]), node('b', [rec('m', 'x', 'c5')]), node('c', [rec('m', 'x', 'c7')])], prior);
    expect(later.entries.map((e) => [e.id, e.hashKey])).toEqual([['m', 'c5:w1'], ['m-2', 'c7:w1'], ['m-3', 'c0:w1']]);
    expect(later.added).toEqual([{ baseId: 'm', hashKey: 'c0:w1', clusterId: 'm-3' }]);
    // A group that left and came back keeps its ID.
    const back = mergeIdentities([node('c', [rec('m', 'x', 'c7')])], [...prior, ...later.added]);
    expect(back.entries.map((e) => e.id)).toEqual(['m-2']);
  });

  it('never hands out a suffixed ID that is another model’s name', () => {
    const { entries } = mergeIdentities([node('a', [rec('m', 'x', 'c1'), rec('m-2', 'y', 'c9')]), node('b', [rec('m', 'x', 'c2')])], []);
    expect(entries.map((e) => e.id).sort()).toEqual(['m', 'm-2', 'm-3']);
    expect(entries.find((e) => e.id === 'm-3')!.replicas[0].nodeId).toBe('b');
  });

  it('a replica is available only when its node is healthy and the record is available', () => {
    const { entries } = mergeIdentities([node('a', [rec('m', 'x', 'c1')], { healthy: false }), node('b', [rec('m', 'x', 'c1', 'w1', false)]), node('c', [rec('m', 'x', 'c1')])], []);
    expect(entries[0].replicas.map((r) => r.available)).toEqual([false, false, true]);
  });
});

describe('cluster catalog', () => {
  it('persists new assignments once and rotates replicas', () => {
    const saved: Assignment[][] = [];
    const store = { suffixes: () => saved.flat(), saveSuffixes: (rows: Assignment[]) => saved.push(rows), carrySuffixes: () => {} };
    const catalog = new ClusterCatalog(store);
    const nodes = [node('a', [rec('m', 'x', 'c1')]), node('b', [rec('m', 'y', 'c1')])];
    catalog.update(nodes);
    catalog.update(nodes);
    expect(saved).toHaveLength(1);
    const e = catalog.get('m')!;
    expect([1, 2, 3].map(() => catalog.rotate('m', e.replicas)!.nodeId)).toEqual(['a', 'b', 'a']);
    expect(new ClusterCatalog(store).all()).toEqual([]);
  });
});

describe('a config changed while the cluster runs', () => {
  it('keeps its cluster ID under its new hash key instead of a suffix, and a new config of that name still gets one', () => {
    let rows: Assignment[] = [];
    const carried: CarriedAssignment[] = [];
    const store = {
      suffixes: () => rows,
      saveSuffixes: (added: Assignment[]) => void (rows = [...rows, ...added]),
      carrySuffixes: (c: CarriedAssignment[]) => {
        carried.push(...c);
        rows = rows.map((a) => c.find((x) => x.baseId === a.baseId && x.from === a.hashKey) ? { ...a, hashKey: c.find((x) => x.from === a.hashKey)!.to } : a);
      },
    };
    const catalog = new ClusterCatalog(store);
    catalog.update([node('a', [rec('m', 'x', 'c1')])]);
    catalog.update([node('a', [rec('m', 'x', 'c2')])]);
    expect(catalog.all().map((e) => e.id)).toEqual(['m']);
    expect(carried).toEqual([{ baseId: 'm', from: 'c1:w1', to: 'c2:w1', clusterId: 'm' }]);
    expect(new ClusterCatalog(store).all()).toEqual([]);
    // Another node's different config of the same name conflicts: it gets a suffix, as ID-2 says.
    catalog.update([node('a', [rec('m', 'x', 'c2')]), node('b', [rec('m', 'x', 'c3')])]);
    expect(catalog.all().map((e) => e.id)).toEqual(['m', 'm-2']);
  });

  it('carries nothing while the old group is still present or shares no replica', () => {
    const prev = mergeIdentities([node('a', [rec('m', 'x', 'c1')])], []).entries;
    const both = mergeIdentities([node('a', [rec('m', 'x', 'c1')]), node('b', [rec('m', 'x', 'c2')])], [{ baseId: 'm', hashKey: 'c1:w1', clusterId: 'm' }]);
    expect(carriedAssignments(prev, both.entries, both.added)).toEqual([]);
    const other = mergeIdentities([node('b', [rec('m', 'x', 'c2')])], [{ baseId: 'm', hashKey: 'c1:w1', clusterId: 'm' }]);
    expect(carriedAssignments(prev, other.entries, other.added)).toEqual([]);
  });
});

describe('configs sharing a name on one node (ID-4)', () => {
  it('stay one model that rotates, even when their configs differ', () => {
    const { entries } = mergeIdentities([node('a', [rec('m', 'x', 'c1'), rec('m', 'y', 'c2')], { local: true })], []);
    expect(entries).toHaveLength(1);
    expect(entries[0].replicas.map((r) => r.record.localId)).toEqual(['x', 'y']);
  });
});

import { describe, expect, it } from 'vitest';
import type { NodeModelRecord } from '../../src-router/contract';
import { type Assignment, ClusterCatalog, mergeIdentities, type NodeRecords } from '../../src-router/registry';

const rec = (
  publicId: string,
  localId: string,
  configHash: string,
  modelHash: string | null = 'w1',
  available = true,
): NodeModelRecord => ({
  publicId,
  localId,
  backend: 'sim',
  capabilities: ['text'],
  lane: 'text',
  configHash,
  modelHash,
  contextsize: 4096,
  parallel: 1,
  engine: null,
  available,
});
const node = (nodeId: string, records: NodeModelRecord[], o: Partial<NodeRecords> = {}): NodeRecords => ({
  nodeId,
  local: false,
  healthy: true,
  url: `http://${nodeId}`,
  records,
  ...o,
});

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
}

describe('identity merge (ID-2)', () => {
  it('same public ID and identical hashes → one model with a replica per node', () => {
    const { entries, added } = mergeIdentities(
      [node('a', [rec('llama', 'l1', 'c1')]), node('b', [rec('llama', 'l7', 'c1')])],
      [],
    );
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ id: 'llama', baseId: 'llama' });
    expect(entries[0].replicas.map((r) => [r.nodeId, r.record.localId])).toEqual([
      ['a', 'l1'],
      ['b', 'l7'],
    ]);
    expect(added).toEqual([{ baseId: 'llama', hashKey: 'c1:w1', clusterId: 'llama' }]);
  });

  it('a different config hash or weights hash gets a numeric suffix', () => {
    const { entries } = mergeIdentities(
      [
        node('a', [rec('llama', 'x', 'c1')]),
        node('b', [rec('llama', 'x', 'c2')]),
        node('c', [rec('llama', 'x', 'c1', 'w2')]),
      ],
      [],
    );
    expect(entries.map((e) => [e.id, e.replicas[0].nodeId])).toEqual([
      ['llama', 'a'],
      ['llama-2', 'c'],
      ['llama-3', 'b'],
    ]);
  });

  it('the local node keeps the bare ID for its own group', () => {
    const { entries } = mergeIdentities(
      [node('a', [rec('llama', 'x', 'c1')]), node('m', [rec('llama', 'x', 'c9')], { local: true })],
      [],
    );
    expect(entries.find((e) => e.id === 'llama')!.replicas[0].nodeId).toBe('m');
  });

  it('does not depend on the order nodes were polled in', () => {
    const nodes = [
      node('a', [rec('m', 'x', 'c1'), rec('n', 'y', 'c5')]),
      node('b', [rec('m', 'x', 'c2')]),
      node('c', [rec('m', 'z', 'c3'), rec('n', 'y', 'c5')]),
    ];
    const results = permutations(nodes).map((p) =>
      JSON.stringify(mergeIdentities(p, []).entries.map((e) => [e.id, e.replicas.map((r) => r.nodeId)])),
    );
    expect(new Set(results).size).toBe(1);
  });

  it('keeps suffixes stable across restarts and when a group that sorts first appears later', () => {
    const first = mergeIdentities([node('b', [rec('m', 'x', 'c5')]), node('c', [rec('m', 'x', 'c7')])], []);
    expect(first.entries.map((e) => e.id)).toEqual(['m', 'm-2']);
    const prior: Assignment[] = first.added;
    const later = mergeIdentities(
      [node('a', [rec('m', 'x', 'c0')]), node('b', [rec('m', 'x', 'c5')]), node('c', [rec('m', 'x', 'c7')])],
      prior,
    );
    expect(later.entries.map((e) => [e.id, e.hashKey])).toEqual([
      ['m', 'c5:w1'],
      ['m-2', 'c7:w1'],
      ['m-3', 'c0:w1'],
    ]);
    expect(later.added).toEqual([{ baseId: 'm', hashKey: 'c0:w1', clusterId: 'm-3' }]);
    // A group that left and came back keeps its ID.
    const back = mergeIdentities([node('c', [rec('m', 'x', 'c7')])], [...prior, ...later.added]);
    expect(back.entries.map((e) => e.id)).toEqual(['m-2']);
  });

  it('never hands out a suffixed ID that is another model’s name', () => {
    const { entries } = mergeIdentities(
      [node('a', [rec('m', 'x', 'c1'), rec('m-2', 'y', 'c9')]), node('b', [rec('m', 'x', 'c2')])],
      [],
    );
    expect(entries.map((e) => e.id).sort()).toEqual(['m', 'm-2', 'm-3']);
    expect(entries.find((e) => e.id === 'm-3')!.replicas[0].nodeId).toBe('b');
  });

  it('a replica is available only when its node is healthy and the record is available', () => {
    const { entries } = mergeIdentities(
      [
        node('a', [rec('m', 'x', 'c1')], { healthy: false }),
        node('b', [rec('m', 'x', 'c1', 'w1', false)]),
        node('c', [rec('m', 'x', 'c1')]),
      ],
      [],
    );
    expect(entries[0].replicas.map((r) => r.available)).toEqual([false, false, true]);
  });
});

describe('cluster catalog', () => {
  it('persists new assignments once and rotates replicas', () => {
    const saved: Assignment[][] = [];
    const store = { suffixes: () => saved.flat(), saveSuffixes: (rows: Assignment[]) => saved.push(rows) };
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

describe('a config changed or replaced while the cluster runs (ID-2: a suffix for a conflict only)', () => {
  it('a new group takes the ID of a group gone instead of a suffix, and the gone one is dropped', () => {
    const first = mergeIdentities([node('a', [rec('m', 'x', 'c1')])], []);
    const edited = mergeIdentities([node('a', [rec('m', 'x', 'c2')])], first.added);
    expect(edited.entries.map((e) => [e.id, e.hashKey])).toEqual([['m', 'c2:w1']]);
    expect(edited.added).toEqual([{ baseId: 'm', hashKey: 'c2:w1', clusterId: 'm' }]);
    expect(edited.dropped).toEqual(first.added);
    // The old config back later is a new group: the ID is in use, so it gets a suffix.
    const prior = [...edited.added];
    const both = mergeIdentities([node('a', [rec('m', 'x', 'c2')]), node('b', [rec('m', 'x', 'c1')])], prior);
    expect(both.entries.map((e) => [e.id, e.hashKey])).toEqual([
      ['m', 'c2:w1'],
      ['m-2', 'c1:w1'],
    ]);
    expect(both.dropped).toEqual([]);
  });

  it('a suffixed group edited keeps its suffix while the conflict lasts', () => {
    const first = mergeIdentities([node('a', [rec('m', 'x', 'c1')]), node('b', [rec('m', 'x', 'c2')])], []);
    expect(first.entries.map((e) => [e.id, e.replicas[0].nodeId])).toEqual([
      ['m', 'a'],
      ['m-2', 'b'],
    ]);
    const edited = mergeIdentities([node('a', [rec('m', 'x', 'c1')]), node('b', [rec('m', 'x', 'c3')])], first.added);
    expect(edited.entries.map((e) => [e.id, e.replicas[0].nodeId])).toEqual([
      ['m', 'a'],
      ['m-2', 'b'],
    ]);
    expect(edited.dropped.map((a) => a.hashKey)).toEqual(['c2:w1']);
  });

  it('the catalog forgets dropped assignments in its store, so a restart agrees', () => {
    let rows: Assignment[] = [];
    const store = {
      suffixes: () => rows,
      saveSuffixes: (added: Assignment[], dropped: Assignment[] = []) =>
        void (rows = [
          ...rows.filter((r) => !dropped.some((d) => d.baseId === r.baseId && d.hashKey === r.hashKey)),
          ...added,
        ]),
    };
    const catalog = new ClusterCatalog(store);
    catalog.update([node('a', [rec('m', 'x', 'c1')])]);
    catalog.update([node('a', [rec('m', 'x', 'c2')])]);
    expect(catalog.all().map((e) => e.id)).toEqual(['m']);
    expect(rows).toEqual([{ baseId: 'm', hashKey: 'c2:w1', clusterId: 'm' }]);
    const restarted = new ClusterCatalog(store);
    restarted.update([node('a', [rec('m', 'x', 'c2')]), node('b', [rec('m', 'x', 'c1')])]);
    expect(restarted.all().map((e) => [e.id, e.hashKey])).toEqual([
      ['m', 'c2:w1'],
      ['m-2', 'c1:w1'],
    ]);
  });
});

describe('configs sharing a name on one node (ID-4)', () => {
  it('stay one model that rotates, even when their configs differ', () => {
    const { entries } = mergeIdentities([node('a', [rec('m', 'x', 'c1'), rec('m', 'y', 'c2')], { local: true })], []);
    expect(entries).toHaveLength(1);
    expect(entries[0].replicas.map((r) => r.record.localId)).toEqual(['x', 'y']);
  });
});

// A member can advertise thousands of records sharing one public ID: the merge's work must grow linearly with them
// (it is counted, not timed: records placed and suffixes tried).
describe('the merge at scale: records sharing a public ID', () => {
  const N = 4_000;
  const distinctNodes = (n: number) => Array.from({ length: n }, (_, i) => node(`n${i}`, [rec('m', 'x', `c${i}`)]));

  it('4,000 nodes with 4,000 different configs of one ID: suffixes m-2 … m-4000 in steps linear in the records', () => {
    const meter = { steps: 0 };
    const { entries, added } = mergeIdentities(distinctNodes(N), [], meter);
    expect(entries).toHaveLength(N);
    expect(new Set(entries.map((e) => e.id)).size).toBe(N);
    expect(added.map((a) => a.clusterId)).toContain(`m-${N}`);
    expect(meter.steps).toBeGreaterThanOrEqual(N);
    expect(meter.steps).toBeLessThanOrEqual(4 * N);
    const half = { steps: 0 };
    mergeIdentities(distinctNodes(N / 2), [], half);
    expect(meter.steps / half.steps).toBeLessThan(2.1);
  });

  it('with half of them assigned before (a restart), the new half is placed in linear steps, no ID given twice', () => {
    const nodes = distinctNodes(N);
    const first = mergeIdentities(nodes.slice(0, N / 2), []);
    const meter = { steps: 0 };
    const { entries, added } = mergeIdentities(nodes, first.added, meter);
    expect(added).toHaveLength(N / 2);
    expect(new Set(entries.map((e) => e.id)).size).toBe(N);
    expect(meter.steps).toBeGreaterThanOrEqual(N);
    expect(meter.steps).toBeLessThanOrEqual(4 * N);
  });

  it('one node with 4,000 records of one ID and different configs: one model, its replicas, in linear steps', () => {
    const meter = { steps: 0 };
    const records = Array.from({ length: N }, (_, i) => rec('m', `x${i}`, `c${i}`));
    const { entries } = mergeIdentities([node('a', records)], [], meter);
    expect(entries).toHaveLength(1);
    expect(entries[0].replicas).toHaveLength(N);
    expect(meter.steps).toBeGreaterThanOrEqual(N);
    expect(meter.steps).toBeLessThanOrEqual(2 * N);
  });
});

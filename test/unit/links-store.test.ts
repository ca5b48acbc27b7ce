import { describe, expect, it } from 'vitest';
import { linkRecordSchema, RouterError } from '../../src-router/contract';
import { LinkStore, type NewLink, toLinkRecord } from '../../src-router/lending/links';
import { openStore } from '../../src-router/store';
import { tempDir } from '../support/node-harness';

const link = (over: Partial<NewLink> = {}): NewLink => ({
  lane: 'image',
  owner: { nodeId: 'a', model: 'sdxl' },
  helper: { nodeId: 'b', model: 'sdxl-b' },
  loadIfUnloaded: true,
  restoreAfterBorrow: false,
  weights: 'same',
  acknowledged: false,
  ...over,
});

function store(): LinkStore {
  let t = 1_000;
  return new LinkStore(openStore(tempDir()), () => (t += 10));
}

describe('LinkStore', () => {
  it('creates, lists, gets, updates and deletes, bumping the version on every change', () => {
    const s = store();
    expect(s.version()).toBe(0);
    expect(s.list()).toEqual([]);

    const l1 = s.create(link());
    expect(l1.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(s.version()).toBe(1);
    const l2 = s.create(
      link({
        lane: 'text',
        owner: { nodeId: 'a', model: 'llama' },
        helper: { nodeId: 'b', model: 'llama-b' },
        weights: 'different',
        acknowledged: true,
      }),
    );
    expect(s.version()).toBe(2);

    expect(s.list().map((l) => l.id)).toEqual([l1.id, l2.id]);
    expect(s.list('image')).toEqual([l1]);
    expect(s.list('text')).toEqual([l2]);
    expect(s.get(l2.id)).toEqual(l2);
    expect(s.get('nope')).toBeUndefined();

    const u = s.update(l1.id, { restoreAfterBorrow: true, loadIfUnloaded: false });
    expect(u).toMatchObject({ id: l1.id, restoreAfterBorrow: true, loadIfUnloaded: false, createdAt: l1.createdAt });
    expect(u!.updatedAt).toBeGreaterThan(l1.updatedAt);
    expect(s.get(l1.id)).toEqual(u);
    expect(s.version()).toBe(3);

    // A patch that changes nothing is not a change.
    expect(s.update(l1.id, { restoreAfterBorrow: true })).toEqual(u);
    expect(s.update(l1.id, {})).toEqual(u);
    expect(s.version()).toBe(3);
    expect(s.update('nope', { restoreAfterBorrow: true })).toBeUndefined();

    expect(s.update(l2.id, { acknowledged: false })?.acknowledged).toBe(false);
    expect(s.version()).toBe(4);

    expect(s.delete(l1.id)).toBe(true);
    expect(s.delete(l1.id)).toBe(false);
    expect(s.version()).toBe(5);
    expect(s.list()).toEqual([expect.objectContaining({ id: l2.id })]);
  });

  it('refuses a second link for the same lane, owner and helper (409) without bumping; the reverse and the other lane are separate', () => {
    const s = store();
    s.create(link());
    let err: unknown;
    try {
      s.create(link({ restoreAfterBorrow: true }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RouterError);
    expect(err).toMatchObject({ status: 409, code: 'duplicate_link' });
    expect(s.version()).toBe(1);
    s.create(link({ owner: { nodeId: 'b', model: 'sdxl-b' }, helper: { nodeId: 'a', model: 'sdxl' } }));
    s.create(link({ lane: 'text' }));
    expect(s.list()).toHaveLength(3);
  });

  it('gives the planner LinkSpecs and the site API valid records', () => {
    const s = store();
    const l = s.create(link({ restoreAfterBorrow: true }));
    expect(s.toSpecs()).toEqual([
      {
        id: l.id,
        lane: 'image',
        owner: { nodeId: 'a', model: 'sdxl' },
        helper: { nodeId: 'b', model: 'sdxl-b' },
        loadIfUnloaded: true,
        restoreAfterBorrow: true,
      },
    ]);
    expect(s.toSpecs('text')).toEqual([]);
    const wire = linkRecordSchema.parse(toLinkRecord(l));
    expect(wire).toMatchObject({
      owner: { node_id: 'a', model: 'sdxl' },
      helper: { node_id: 'b', model: 'sdxl-b' },
      load_if_unloaded: true,
      restore_after_borrow: true,
      weights: 'same',
      acknowledged: false,
    });
    expect(wire.created_at).toBe(new Date(l.createdAt).toISOString());
  });

  it('setWeights changes only what differs, with one bump', () => {
    const s = store();
    const a = s.create(link());
    const b = s.create(link({ helper: { nodeId: 'c', model: 'x' } }));
    expect(s.setWeights([{ id: a.id, weights: 'same' }])).toBe(0);
    expect(s.version()).toBe(2);
    expect(
      s.setWeights([
        { id: a.id, weights: 'different' },
        { id: b.id, weights: 'different' },
      ]),
    ).toBe(2);
    expect(s.version()).toBe(3);
    expect(s.list().map((l) => l.weights)).toEqual(['different', 'different']);
  });

  it("replaceAll applies the master's push (LEASE-1) idempotently, keeping its IDs and version", () => {
    const master = store();
    const m1 = master.create(link());
    const m2 = master.create(
      link({ lane: 'text', owner: { nodeId: 'a', model: 'llama' }, helper: { nodeId: 'b', model: 'llama-b' } }),
    );
    const slave = store();
    const old = slave.create(link({ owner: { nodeId: 'z', model: 'old' } }));

    expect(slave.replaceAll(master.version(), master.toSpecs())).toBe(true);
    expect(slave.version()).toBe(2);
    expect(slave.get(old.id)).toBeUndefined();
    expect(slave.toSpecs()).toEqual(master.toSpecs());
    // Without weights in the push: 'different', acknowledged (the master validated them).
    expect(slave.get(m1.id)).toMatchObject({ weights: 'different', acknowledged: true });
    const before = slave.list();

    expect(slave.replaceAll(2, master.toSpecs())).toBe(false);
    expect(slave.list()).toEqual(before);

    // A change on the master: one flag, one link gone, one link for the same pair under a new ID.
    master.update(m1.id, { loadIfUnloaded: false });
    master.delete(m2.id);
    const m3 = master.create(
      link({ lane: 'text', owner: { nodeId: 'a', model: 'llama' }, helper: { nodeId: 'b', model: 'llama-b' } }),
    );
    const pushed = master.list().map((l) => ({ ...l }));
    expect(slave.replaceAll(master.version(), pushed)).toBe(true);
    expect(slave.version()).toBe(master.version());
    expect(slave.list().map((l) => [l.id, l.loadIfUnloaded, l.weights])).toEqual(
      master.list().map((l) => [l.id, l.loadIfUnloaded, l.weights]),
    );
    expect(slave.get(m1.id)!.createdAt).toBe(before.find((l) => l.id === m1.id)!.createdAt);
    expect(slave.get(m3.id)).toBeDefined();
    expect(slave.replaceAll(master.version(), pushed)).toBe(false);

    // Same links, new version only: the version is taken.
    expect(slave.replaceAll(99, pushed)).toBe(true);
    expect(slave.version()).toBe(99);
    // Empty push clears.
    expect(slave.replaceAll(100, [])).toBe(true);
    expect(slave.list()).toEqual([]);
  });
});

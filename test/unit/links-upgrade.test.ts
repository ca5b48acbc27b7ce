import { describe, expect, it } from 'vitest';
import { LEGACY_ROUTING_GROUPS_SQL, LinkStore } from '../../src-router/lending/links';
import { MIGRATIONS, openStore, schemaVersion } from '../../src-router/store';
import { tempDir } from '../support/node-harness';

const tables = (db: ReturnType<typeof openStore>) =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);

describe('LINK-5: routing groups become links on upgrade', () => {
  it('turns each cross-node pair into two links, restore flag on the link whose helper had it, and drops the legacy tables', () => {
    const dir = tempDir();
    const old = openStore(
      dir,
      MIGRATIONS.filter((m) => m.version <= 2),
    );
    expect(schemaVersion(old)).toBe(2);
    old.exec(LEGACY_ROUTING_GROUPS_SQL);
    old.prepare('INSERT INTO routing_groups (id, lane, name) VALUES (?, ?, ?)').run('g1', 'image', 'sdxl everywhere');
    const member = old.prepare(
      'INSERT INTO routing_group_members (group_id, node_id, model, restore_after_borrow) VALUES (?, ?, ?, ?)',
    );
    member.run('g1', 'a', 'sdxl', 1); // restores after borrowing
    member.run('g1', 'a', 'sdxl-turbo', 0); // same node as sdxl: no link between them
    member.run('g1', 'b', 'sdxl-b', 0);
    old.close();

    const db = openStore(dir);
    expect(schemaVersion(db)).toBe(MIGRATIONS.at(-1)!.version);
    expect(tables(db)).not.toContain('routing_groups');
    expect(tables(db)).not.toContain('routing_group_members');
    const store = new LinkStore(db);
    const got = store
      .list()
      .map(
        (l) =>
          `${l.lane} ${l.owner.nodeId}/${l.owner.model} -> ${l.helper.nodeId}/${l.helper.model} load=${l.loadIfUnloaded} restore=${l.restoreAfterBorrow} ${l.weights} ack=${l.acknowledged}`,
      )
      .sort();
    expect(got).toEqual([
      'image a/sdxl -> b/sdxl-b load=true restore=false different ack=true',
      'image a/sdxl-turbo -> b/sdxl-b load=true restore=false different ack=true',
      'image b/sdxl-b -> a/sdxl load=true restore=true different ack=true',
      'image b/sdxl-b -> a/sdxl-turbo load=true restore=false different ack=true',
    ]);
    expect(new Set(store.list().map((l) => l.id)).size).toBe(4);
    expect(store.version()).toBe(1);
    db.close();

    // Reopening changes nothing.
    const again = openStore(dir);
    expect(new LinkStore(again).list()).toHaveLength(4);
    again.close();
  });

  it('keeps a text group in the text lane', () => {
    const dir = tempDir();
    const old = openStore(
      dir,
      MIGRATIONS.filter((m) => m.version <= 2),
    );
    old.exec(LEGACY_ROUTING_GROUPS_SQL);
    old.prepare('INSERT INTO routing_groups (id, lane, name) VALUES (?, ?, ?)').run('t', 'text', null);
    old
      .prepare('INSERT INTO routing_group_members VALUES (?, ?, ?, ?), (?, ?, ?, ?)')
      .run('t', 'a', 'llama', 0, 't', 'b', 'llama-b', 1);
    old.close();
    const store = new LinkStore(openStore(dir));
    expect(store.list().map((l) => [l.lane, l.owner.model, l.helper.model, l.restoreAfterBorrow])).toEqual([
      ['text', 'llama', 'llama-b', true],
      ['text', 'llama-b', 'llama', false],
    ]);
  });

  it('leaves a store without legacy tables unaffected: an empty links table at version 0', () => {
    const dir = tempDir();
    openStore(
      dir,
      MIGRATIONS.filter((m) => m.version <= 2),
    ).close();
    const db = openStore(dir);
    const store = new LinkStore(db);
    expect(store.list()).toEqual([]);
    expect(store.version()).toBe(0);
    expect(tables(db)).toEqual(expect.arrayContaining(['links', 'settings']));
  });
});

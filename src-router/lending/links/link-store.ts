/**
 * Routing links in the router's SQLite store (table `links`, migration 3). Every change bumps `links_version`
 * (table `settings`), which the master pushes with the links so slaves apply them once (LEASE-1).
 */
import { randomUUID } from 'node:crypto';
import { RouterError } from '../../contract';
import { type Db, settingsCounter } from '../../store';
import type { LendingLane, LinkSpec } from '../types';
import { type LinkPatch, type NewLink, type ReplicatedLink, type StoredLink, toLinkSpec } from './link-schema';

interface LinkRow {
  id: string;
  lane: LendingLane;
  owner_node: string;
  owner_model: string;
  helper_node: string;
  helper_model: string;
  load_if_unloaded: number;
  restore_after_borrow: number;
  weights: 'same' | 'different';
  acknowledged: number;
  created_at: number;
  updated_at: number;
}

const fromRow = (r: LinkRow): StoredLink => ({
  id: r.id,
  lane: r.lane,
  owner: { nodeId: r.owner_node, model: r.owner_model },
  helper: { nodeId: r.helper_node, model: r.helper_model },
  loadIfUnloaded: r.load_if_unloaded === 1,
  restoreAfterBorrow: r.restore_after_borrow === 1,
  weights: r.weights,
  acknowledged: r.acknowledged === 1,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toParams = (l: StoredLink) => ({
  id: l.id,
  lane: l.lane,
  owner_node: l.owner.nodeId,
  owner_model: l.owner.model,
  helper_node: l.helper.nodeId,
  helper_model: l.helper.model,
  load_if_unloaded: l.loadIfUnloaded ? 1 : 0,
  restore_after_borrow: l.restoreAfterBorrow ? 1 : 0,
  weights: l.weights,
  acknowledged: l.acknowledged ? 1 : 0,
  created_at: l.createdAt,
  updated_at: l.updatedAt,
});

const COLUMNS =
  'id, lane, owner_node, owner_model, helper_node, helper_model, load_if_unloaded, restore_after_borrow, weights, acknowledged, created_at, updated_at';
const VALUES =
  '@id, @lane, @owner_node, @owner_model, @helper_node, @helper_model, @load_if_unloaded, @restore_after_borrow, @weights, @acknowledged, @created_at, @updated_at';
const ORDER = 'ORDER BY lane, owner_node, owner_model, helper_node, helper_model';

/** What replaceAll compares: everything a push carries. */
const replicaKey = (l: StoredLink) =>
  JSON.stringify([l.id, l.lane, l.owner, l.helper, l.loadIfUnloaded, l.restoreAfterBorrow, l.weights, l.acknowledged]);

const isUniqueViolation = (e: unknown) =>
  e instanceof Error && 'code' in e && (e as { code: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE';

export class LinkStore {
  private readonly counter;

  constructor(
    private readonly db: Db,
    private readonly clock: () => number = Date.now,
  ) {
    this.counter = settingsCounter(db, 'links_version');
  }

  list(lane?: LendingLane): StoredLink[] {
    const rows = lane
      ? this.db.prepare(`SELECT * FROM links WHERE lane = ? ${ORDER}`).all(lane)
      : this.db.prepare(`SELECT * FROM links ${ORDER}`).all();
    return (rows as LinkRow[]).map(fromRow);
  }

  get(id: string): StoredLink | undefined {
    const row = this.db.prepare('SELECT * FROM links WHERE id = ?').get(id) as LinkRow | undefined;
    return row && fromRow(row);
  }

  /** Stores a validated link (validateLink). A second link for the same lane, owner and helper is a 409. */
  create(link: NewLink): StoredLink {
    const now = this.clock();
    const stored: StoredLink = {
      ...link,
      owner: { ...link.owner },
      helper: { ...link.helper },
      id: randomUUID(),
      createdAt: now,
      updatedAt: now,
    };
    try {
      this.db.transaction(() => {
        this.db.prepare(`INSERT INTO links (${COLUMNS}) VALUES (${VALUES})`).run(toParams(stored));
        this.bump();
      })();
    } catch (e) {
      if (isUniqueViolation(e))
        throw new RouterError(
          409,
          'duplicate_link',
          `a ${link.lane} link from ${link.owner.model} on ${link.owner.nodeId} to ${link.helper.model} on ${link.helper.nodeId} already exists`,
        );
      throw e;
    }
    return stored;
  }

  /** Changes the flags or the acknowledgement; undefined for an unknown ID. A patch that changes nothing bumps nothing. */
  update(id: string, patch: LinkPatch): StoredLink | undefined {
    const current = this.get(id);
    if (!current) return undefined;
    const next: StoredLink = {
      ...current,
      loadIfUnloaded: patch.loadIfUnloaded ?? current.loadIfUnloaded,
      restoreAfterBorrow: patch.restoreAfterBorrow ?? current.restoreAfterBorrow,
      acknowledged: patch.acknowledged ?? current.acknowledged,
    };
    if (
      next.loadIfUnloaded === current.loadIfUnloaded &&
      next.restoreAfterBorrow === current.restoreAfterBorrow &&
      next.acknowledged === current.acknowledged
    )
      return current;
    next.updatedAt = this.clock();
    this.db.transaction(() => {
      this.db
        .prepare(
          'UPDATE links SET load_if_unloaded = @load_if_unloaded, restore_after_borrow = @restore_after_borrow, acknowledged = @acknowledged, updated_at = @updated_at WHERE id = @id',
        )
        .run(toParams(next));
      this.bump();
    })();
    return next;
  }

  delete(id: string): boolean {
    return this.db.transaction(() => {
      const gone = this.db.prepare('DELETE FROM links WHERE id = ?').run(id).changes > 0;
      if (gone) this.bump();
      return gone;
    })();
  }

  /** Records recomputed weights (link-upgrade.ts); one bump when anything changed. Returns how many links changed. */
  setWeights(changes: { id: string; weights: StoredLink['weights'] }[]): number {
    const now = this.clock();
    return this.db.transaction(() => {
      const stmt = this.db.prepare('UPDATE links SET weights = ?, updated_at = ? WHERE id = ? AND weights <> ?');
      let n = 0;
      for (const c of changes) n += stmt.run(c.weights, now, c.id, c.weights).changes;
      if (n) this.bump();
      return n;
    })();
  }

  /** The counter bumped on every change (LEASE-1). */
  version(): number {
    return this.counter.read();
  }

  /** The links as the planner reads them. */
  toSpecs(lane?: LendingLane): LinkSpec[] {
    return this.list(lane).map(toLinkSpec);
  }

  /**
   * A slave applying the links the master pushed (LEASE-1): the store becomes exactly `links` at `version`, keeping
   * the master's IDs (and created_at of links it already had). Idempotent: the same push again changes nothing and
   * returns false. The master's version is authoritative even when lower (a master whose store was reset).
   * Weights and acknowledgement default to 'different' / acknowledged when the push does not carry them.
   */
  replaceAll(version: number, links: ReplicatedLink[]): boolean {
    const now = this.clock();
    const current = new Map(this.list().map((l) => [l.id, l]));
    const incoming: StoredLink[] = links.map((s) => {
      const had = current.get(s.id);
      const base: StoredLink = {
        id: s.id,
        lane: s.lane,
        owner: { nodeId: s.owner.nodeId, model: s.owner.model },
        helper: { nodeId: s.helper.nodeId, model: s.helper.model },
        loadIfUnloaded: s.loadIfUnloaded,
        restoreAfterBorrow: s.restoreAfterBorrow,
        weights: s.weights ?? had?.weights ?? 'different',
        acknowledged: s.acknowledged ?? had?.acknowledged ?? true,
        createdAt: had?.createdAt ?? now,
        updatedAt: now,
      };
      return had && replicaKey(had) === replicaKey(base) ? had : base;
    });
    const ids = new Set(incoming.map((l) => l.id));
    const removed = [...current.keys()].filter((id) => !ids.has(id));
    const changed = incoming.filter((l) => current.get(l.id) !== l);
    if (!removed.length && !changed.length && version === this.version()) return false;
    this.db.transaction(() => {
      const del = this.db.prepare('DELETE FROM links WHERE id = ?');
      for (const id of removed) del.run(id);
      // Drop changed rows first so a pair that moved to a new ID never collides with its old row on the unique key.
      for (const l of changed) del.run(l.id);
      const ins = this.db.prepare(`INSERT INTO links (${COLUMNS}) VALUES (${VALUES})`);
      for (const l of changed) ins.run(toParams(l));
      this.setVersion(version);
    })();
    return true;
  }

  private bump(): void {
    this.counter.bump();
  }

  private setVersion(version: number): void {
    this.counter.set(version);
  }
}

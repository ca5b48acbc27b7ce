/**
 * Guardian settings in the router's SQLite store (table `guardian_settings`, migration 8), one row per scope and
 * target (GUARD-1). Every change bumps `guardians_version` (table `settings`), which the master pushes with the
 * settings so slaves apply them once (LEASE-1) and report the version they run. A slave's copy also keeps where each
 * guardian answers and its public ID, as pushed.
 */
import type { GuardianScope } from '../contract';
import { type Db, settingsCounter } from '../store';
import type { GuardianRule } from './rules';

/** A stored setting. `url` and `publicId` are set on a slave's pushed copy only (null on the master). */
export interface StoredGuardianRule extends GuardianRule {
  url: string | null;
  publicId: string | null;
  updatedAt: number;
}

/** The scope keys of one setting (a DELETE body, a PUT's target). */
export type GuardianScopeKey = Pick<GuardianRule, 'scope' | 'nodeId' | 'model'>;

/** What a slave applies: the rule and, from the push, where its guardian answers. */
export type ReplicatedGuardianRule = GuardianRule & { url: string | null; publicId: string | null };

interface Row {
  scope: GuardianScope;
  node_id: string;
  model: string;
  guardian_node: string;
  guardian_model: string;
  guardian_url: string | null;
  guardian_public_id: string | null;
  updated_at: number;
}

const fromRow = (r: Row): StoredGuardianRule => ({
  scope: r.scope,
  nodeId: r.scope === 'cluster' ? null : r.node_id,
  model: r.scope === 'model' ? r.model : null,
  guardian: { nodeId: r.guardian_node, model: r.guardian_model },
  url: r.guardian_url,
  publicId: r.guardian_public_id,
  updatedAt: r.updated_at,
});

const toParams = (r: StoredGuardianRule): Row => ({
  scope: r.scope,
  node_id: r.scope === 'cluster' ? '' : (r.nodeId ?? ''),
  model: r.scope === 'model' ? (r.model ?? '') : '',
  guardian_node: r.guardian.nodeId,
  guardian_model: r.guardian.model,
  guardian_url: r.url,
  guardian_public_id: r.publicId,
  updated_at: r.updatedAt,
});

const keyParams = (k: GuardianScopeKey) => ({
  scope: k.scope,
  node_id: k.scope === 'cluster' ? '' : (k.nodeId ?? ''),
  model: k.scope === 'model' ? (k.model ?? '') : '',
});

const INSERT = `INSERT INTO guardian_settings (scope, node_id, model, guardian_node, guardian_model, guardian_url, guardian_public_id, updated_at)
  VALUES (@scope, @node_id, @model, @guardian_node, @guardian_model, @guardian_url, @guardian_public_id, @updated_at)
  ON CONFLICT (scope, node_id, model) DO UPDATE SET guardian_node = excluded.guardian_node, guardian_model = excluded.guardian_model,
    guardian_url = excluded.guardian_url, guardian_public_id = excluded.guardian_public_id, updated_at = excluded.updated_at`;
const WHERE_KEY = 'WHERE scope = @scope AND node_id = @node_id AND model = @model';
/** Least specific first: the cluster default, then nodes, then models. */
const ORDER = "ORDER BY CASE scope WHEN 'cluster' THEN 0 WHEN 'node' THEN 1 ELSE 2 END, node_id, model";

/** Everything a push carries, compared by replaceAll. */
const replicaKey = (r: ReplicatedGuardianRule) =>
  JSON.stringify([r.scope, r.nodeId, r.model, r.guardian.nodeId, r.guardian.model, r.url, r.publicId]);

export class GuardianStore {
  private readonly counter;

  constructor(
    private readonly db: Db,
    private readonly clock: () => number = Date.now,
  ) {
    this.counter = settingsCounter(db, 'guardians_version');
  }

  list(): StoredGuardianRule[] {
    return (this.db.prepare(`SELECT * FROM guardian_settings ${ORDER}`).all() as Row[]).map(fromRow);
  }

  get(key: GuardianScopeKey): StoredGuardianRule | undefined {
    const row = this.db.prepare(`SELECT * FROM guardian_settings ${WHERE_KEY}`).get(keyParams(key)) as Row | undefined;
    return row && fromRow(row);
  }

  /** Creates or replaces the setting of a validated rule (validateGuardianSetting). The same guardian again bumps nothing. */
  put(rule: GuardianRule): StoredGuardianRule {
    const current = this.get(rule);
    if (current && current.guardian.nodeId === rule.guardian.nodeId && current.guardian.model === rule.guardian.model)
      return current;
    const stored: StoredGuardianRule = {
      scope: rule.scope,
      nodeId: rule.nodeId,
      model: rule.model,
      guardian: { ...rule.guardian },
      url: null,
      publicId: null,
      updatedAt: this.clock(),
    };
    this.db.transaction(() => {
      this.db.prepare(INSERT).run(toParams(stored));
      this.counter.bump();
    })();
    return this.get(rule)!;
  }

  /** Removes a setting; false when there was none. */
  delete(key: GuardianScopeKey): boolean {
    return this.db.transaction(() => {
      const gone = this.db.prepare(`DELETE FROM guardian_settings ${WHERE_KEY}`).run(keyParams(key)).changes > 0;
      if (gone) this.counter.bump();
      return gone;
    })();
  }

  /** The counter bumped on every change (LEASE-1); on a slave, the master's version it applied. */
  version(): number {
    return this.counter.read();
  }

  /**
   * A slave applying the settings the master pushed: the store becomes exactly `rules` at `version`. Idempotent: the
   * same push again changes nothing and returns false. The master's version is authoritative even when lower (a
   * master whose store was reset).
   */
  replaceAll(version: number, rules: ReplicatedGuardianRule[]): boolean {
    const current = new Map(this.list().map((r) => [replicaKey(r), r]));
    const incoming = new Set(rules.map(replicaKey));
    const same = current.size === incoming.size && [...incoming].every((k) => current.has(k));
    if (same && version === this.version()) return false;
    const now = this.clock();
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM guardian_settings').run();
      const ins = this.db.prepare(INSERT);
      for (const r of rules) {
        const had = current.get(replicaKey(r));
        ins.run(
          toParams({
            scope: r.scope,
            nodeId: r.nodeId,
            model: r.model,
            guardian: { ...r.guardian },
            url: r.url,
            publicId: r.publicId,
            updatedAt: had?.updatedAt ?? now,
          }),
        );
      }
      this.counter.set(version);
    })();
    return true;
  }
}

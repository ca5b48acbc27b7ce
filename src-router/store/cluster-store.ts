import type { Db } from './db';

/** A slave as the master last knew it: kept so a restarted master shows the last known cluster while it re-polls. */
export interface StoredNode {
  url: string;
  nodeId: string | null;
  snapshot: string | null;
  version: string | null;
  settingsHash: string | null;
  healthy: boolean;
  lastSeen: number | null;
  lastError: string | null;
}

export class ClusterStore {
  constructor(private readonly db: Db) {}

  saveNode(n: StoredNode): void {
    this.db
      .prepare(`INSERT INTO cluster_nodes (url, node_id, snapshot, version, settings_hash, healthy, last_seen, last_error, updated_at)
        VALUES (@url, @nodeId, @snapshot, @version, @settingsHash, @healthy, @lastSeen, @lastError, @updatedAt)
        ON CONFLICT(url) DO UPDATE SET node_id = excluded.node_id, snapshot = excluded.snapshot, version = excluded.version,
          settings_hash = excluded.settings_hash, healthy = excluded.healthy, last_seen = excluded.last_seen, last_error = excluded.last_error, updated_at = excluded.updated_at`)
      .run({ ...n, healthy: n.healthy ? 1 : 0, updatedAt: Date.now() });
  }

  nodes(): StoredNode[] {
    return (this.db.prepare('SELECT * FROM cluster_nodes ORDER BY url').all() as Record<string, unknown>[]).map(
      (r) => ({
        url: r.url as string,
        nodeId: r.node_id as string | null,
        snapshot: r.snapshot as string | null,
        version: r.version as string | null,
        settingsHash: r.settings_hash as string | null,
        healthy: r.healthy === 1,
        lastSeen: r.last_seen as number | null,
        lastError: r.last_error as string | null,
      }),
    );
  }

  /** Identity suffix assignments (ID-2): (base ID, hash key) → cluster ID, kept forever so suffixes are stable. */
  suffixes(): { baseId: string; hashKey: string; clusterId: string }[] {
    return (
      this.db.prepare('SELECT base_id, hash_key, cluster_id FROM identity_suffixes').all() as Record<string, string>[]
    ).map((r) => ({ baseId: r.base_id, hashKey: r.hash_key, clusterId: r.cluster_id }));
  }

  /** Keeps new assignments, after forgetting `dropped` ones (groups gone whose ID was handed out again). */
  saveSuffixes(
    rows: { baseId: string; hashKey: string; clusterId: string }[],
    dropped: { baseId: string; hashKey: string }[] = [],
  ): void {
    const drop = this.db.prepare('DELETE FROM identity_suffixes WHERE base_id = ? AND hash_key = ?');
    const stmt = this.db.prepare(
      'INSERT OR IGNORE INTO identity_suffixes (base_id, hash_key, cluster_id, assigned_at) VALUES (?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      for (const r of dropped) drop.run(r.baseId, r.hashKey);
      for (const r of rows) stmt.run(r.baseId, r.hashKey, r.clusterId, Date.now());
    })();
  }
}

/** Versioned schema migrations, applied in order inside one transaction each. Never edit a released one: add the next. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'analytics and model hashes',
    sql: `
      CREATE TABLE request_analytics (
        id INTEGER PRIMARY KEY,
        finished_at INTEGER NOT NULL,      -- unix ms
        node_id TEXT NOT NULL,
        model TEXT NOT NULL,               -- public ID
        local_id TEXT NOT NULL,            -- config that served it
        backend TEXT NOT NULL,             -- backend family
        endpoint TEXT NOT NULL,            -- chat | completion | embedding | image | transcription
        streamed INTEGER NOT NULL,
        prompt_bytes INTEGER,              -- text work
        tokens_generated INTEGER,          -- text work
        image_pixels INTEGER,              -- width*height
        image_steps INTEGER,
        image_count INTEGER,
        audio_seconds REAL,                -- transcription work
        queue_wait_ms INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL,
        outcome TEXT NOT NULL,             -- ok | error | cancelled
        status INTEGER,
        error TEXT
      );
      CREATE INDEX request_analytics_model_time ON request_analytics(model, finished_at);
      CREATE TABLE load_analytics (
        id INTEGER PRIMARY KEY,
        finished_at INTEGER NOT NULL,
        node_id TEXT NOT NULL,
        model TEXT NOT NULL,
        local_id TEXT NOT NULL,
        backend TEXT NOT NULL,
        lane TEXT NOT NULL,
        duration_ms INTEGER NOT NULL,
        success INTEGER NOT NULL,
        displaced_local_id TEXT,
        error TEXT
      );
      CREATE INDEX load_analytics_model_time ON load_analytics(local_id, finished_at);
      CREATE TABLE model_hashes (
        path TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        mtime_ms INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        computed_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'cluster membership, identity suffixes, assets, recipes',
    sql: `
      CREATE TABLE cluster_nodes (
        url TEXT PRIMARY KEY,            -- the configured slave URL
        node_id TEXT,
        snapshot TEXT,                   -- last NodeSnapshot JSON
        version TEXT,
        settings_hash TEXT,
        healthy INTEGER NOT NULL DEFAULT 0,
        last_seen INTEGER,               -- unix ms of the last successful poll or registration
        last_error TEXT,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE identity_suffixes (
        base_id TEXT NOT NULL,
        hash_key TEXT NOT NULL,
        cluster_id TEXT NOT NULL,
        assigned_at INTEGER NOT NULL,
        PRIMARY KEY (base_id, hash_key)
      );
      CREATE UNIQUE INDEX identity_suffixes_cluster_id ON identity_suffixes(cluster_id);
      CREATE TABLE asset_bindings (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        reference TEXT NOT NULL,         -- what was asked for (name or hash)
        sha256 TEXT NOT NULL,
        from_node TEXT,
        path TEXT,
        result TEXT NOT NULL,            -- bound | substituted | rejected
        reason TEXT
      );
      CREATE TABLE recipes (
        name TEXT PRIMARY KEY,
        definition TEXT NOT NULL,        -- JSON: components
        updated_at INTEGER NOT NULL
      );
    `,
  },
];

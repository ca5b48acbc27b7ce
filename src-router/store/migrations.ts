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
];

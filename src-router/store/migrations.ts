import { randomUUID } from 'node:crypto';
import type { Db } from './db';

/** Versioned schema migrations, applied in order inside one transaction each. Never edit a released one: add the next. */
export interface Migration {
  version: number;
  name: string;
  /** Plain DDL/DML, run first ('' when the migration is all code). */
  sql: string;
  /** Data step run after `sql`, inside the same transaction (e.g. converting legacy tables). */
  run?(db: Db): void;
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
  {
    version: 3,
    name: 'routing links (LINK-1..5), settings, links_version',
    sql: `
      CREATE TABLE links (
        id TEXT PRIMARY KEY,             -- uuid
        lane TEXT NOT NULL CHECK (lane IN ('image', 'text')),
        owner_node TEXT NOT NULL,        -- the owner lends held work (LINK-1)
        owner_model TEXT NOT NULL,       -- local ID on owner_node
        helper_node TEXT NOT NULL,       -- the helper borrows it
        helper_model TEXT NOT NULL,      -- local ID on helper_node
        load_if_unloaded INTEGER NOT NULL DEFAULT 1,
        restore_after_borrow INTEGER NOT NULL DEFAULT 0,
        weights TEXT NOT NULL CHECK (weights IN ('same', 'different')),
        acknowledged INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,     -- unix ms
        updated_at INTEGER NOT NULL,
        UNIQUE (lane, owner_node, owner_model, helper_node, helper_model)
      );
      CREATE INDEX links_helper ON links(helper_node, helper_model);
      CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      INSERT OR IGNORE INTO settings (key, value) VALUES ('links_version', '0');
    `,
    run: upgradeRoutingGroups,
  },
  {
    version: 4,
    name: 'offload decision log (LOG-1..4)',
    sql: `
      CREATE TABLE offload_decisions (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,                 -- unix ms on the writing node
        node_id TEXT NOT NULL,               -- the node that wrote it
        router_version TEXT NOT NULL,
        kind TEXT NOT NULL,                  -- plan | dispatch | helper
        event TEXT NOT NULL,                 -- plan: the outcome; dispatch/helper: what happened
        "trigger" TEXT,                      -- enqueued | completed | borrowed_completed | probe_due | tick
        link_id TEXT,
        owner_node TEXT,
        owner_model TEXT,
        helper_node TEXT,
        helper_model TEXT,
        held INTEGER,
        backlog INTEGER,
        owner_drain_ms INTEGER,
        helper_switch_ms INTEGER,
        helper_service_ms INTEGER,
        service_source TEXT,                 -- helper | owner_fallback
        helper_idle_ms INTEGER,
        outcome TEXT,                        -- granted | probe | skipped (plan rows)
        reason TEXT,
        slots INTEGER,
        requests_out INTEGER,
        owner_predicted_finish_ms INTEGER,   -- ms from at
        owner_job_ms INTEGER,
        helper_job_ms INTEGER,
        waited_ms INTEGER,
        borrowed_in_backend INTEGER,
        request_id TEXT,
        details TEXT                         -- JSON object
      );
      CREATE INDEX offload_decisions_time ON offload_decisions(at);
      CREATE INDEX offload_decisions_owner_time ON offload_decisions(owner_model, at);
      CREATE INDEX offload_decisions_helper_time ON offload_decisions(helper_model, at);
    `,
  },
  {
    version: 5,
    name: 'prompt tokens in request analytics (LLM-3 token profiles)',
    sql: 'ALTER TABLE request_analytics ADD COLUMN prompt_tokens INTEGER;',
  },
  {
    version: 6,
    name: 'index for per-config fits',
    sql: 'CREATE INDEX IF NOT EXISTS request_analytics_local ON request_analytics(local_id, node_id, finished_at);',
  },
  {
    version: 7,
    name: "service time per request (PRICE-2: the engine's time on that job alone)",
    sql: `
      ALTER TABLE request_analytics ADD COLUMN service_ms INTEGER;          -- what fits use: engine-reported, else derived
      ALTER TABLE request_analytics ADD COLUMN service_source TEXT;         -- engine | derived | unknown (NULL: rows from before)
      ALTER TABLE request_analytics ADD COLUMN derived_service_ms INTEGER;  -- finish − max(dispatch, previous finish): the cross-check
    `,
  },
  {
    version: 8,
    name: 'guardian settings (GUARD-1), guardians_version',
    sql: `
      CREATE TABLE guardian_settings (
        scope TEXT NOT NULL CHECK (scope IN ('cluster', 'node', 'model')),
        node_id TEXT NOT NULL DEFAULT '',    -- '' for the cluster scope
        model TEXT NOT NULL DEFAULT '',      -- the text-only model's local ID; '' unless the scope is a model
        guardian_node TEXT NOT NULL,
        guardian_model TEXT NOT NULL,        -- local ID on guardian_node
        guardian_url TEXT,                   -- a slave's pushed copy: where the guardian's node answers (NULL: here)
        guardian_public_id TEXT,             -- a slave's pushed copy: the guardian's public ID
        updated_at INTEGER NOT NULL,         -- unix ms
        PRIMARY KEY (scope, node_id, model)
      );
      INSERT OR IGNORE INTO settings (key, value) VALUES ('guardians_version', '0');
    `,
  },
  {
    version: 9,
    name: 'guardian answers in request analytics (GUARD-2)',
    sql: `
      ALTER TABLE request_analytics ADD COLUMN guardian_for TEXT;     -- the text-only model (node/local ID) a guardian answered for
      ALTER TABLE request_analytics ADD COLUMN guardian_reason TEXT;  -- detected | engine_refused
    `,
  },
  {
    version: 10,
    name: 'connection profiles of remote clusters (UI-5)',
    sql: `
      CREATE TABLE cluster_profiles (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        url TEXT NOT NULL,
        token TEXT NOT NULL,          -- as the token cipher wrote it (plain, or sealed by the desktop keychain)
        token_sealing TEXT NOT NULL,  -- plain | safe-storage
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX cluster_profiles_name ON cluster_profiles(name);
    `,
  },
  {
    version: 11,
    name: 'benchmark runs and their rows (ASSET-1: `routerdesk bench` keeps its results in the store)',
    sql: `
      CREATE TABLE bench_runs (
        id TEXT PRIMARY KEY,
        started_at INTEGER NOT NULL,     -- unix ms
        finished_at INTEGER NOT NULL,    -- unix ms
        version TEXT NOT NULL,           -- router version that ran it
        quick INTEGER NOT NULL,          -- 1: --quick
        benchmarks TEXT NOT NULL,        -- JSON array of the benchmarks run, in order
        failed TEXT NOT NULL,            -- JSON array of the benchmarks that failed
        machine TEXT NOT NULL,           -- JSON: node, cores, cpu, platform, arch, hostname, memory
        summary TEXT NOT NULL            -- JSON array of summary lines (benchmark, measure, value, ratio, against)
      );
      CREATE INDEX bench_runs_started ON bench_runs(started_at);
      CREATE TABLE bench_rows (
        run_id TEXT NOT NULL REFERENCES bench_runs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,            -- order within the run
        benchmark TEXT NOT NULL,
        scenario TEXT NOT NULL,
        fields TEXT NOT NULL,            -- JSON object: every other field of the row (as --json writes it)
        PRIMARY KEY (run_id, seq)
      );
    `,
  },
  {
    version: 12,
    name: 'the lease timeline: request id and owner of a borrowed request in request analytics, time indexes',
    sql: `
      ALTER TABLE request_analytics ADD COLUMN request_id TEXT;  -- the request's id (the router queue and decision rows name it)
      ALTER TABLE request_analytics ADD COLUMN lent_from TEXT;   -- a borrowed request on its helper: the owner (node/model)
      CREATE INDEX IF NOT EXISTS request_analytics_time ON request_analytics(finished_at);
      CREATE INDEX IF NOT EXISTS load_analytics_time ON load_analytics(finished_at);
    `,
  },
];

interface LegacyMember {
  groupId: string;
  lane: string;
  nodeId: string;
  model: string;
  restore: number | null;
}

/**
 * LINK-5: earlier releases stored symmetric routing groups (`routing_groups`, `routing_group_members`). Each pair of
 * members on different nodes becomes two links, one per direction, loading allowed, restore flag taken from the
 * member that is the helper of that link. Weights are unknown here (no catalog): stored as 'different' and
 * acknowledged, since the operator already linked them; `refreshLinkWeights` recomputes them later. Same-node pairs
 * are skipped (a link lends to another node). The legacy tables are dropped. A store without them is unaffected.
 */
function upgradeRoutingGroups(db: Db): void {
  const exists = (t: string) =>
    db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(t) !== undefined;
  const hasGroups = exists('routing_groups');
  const hasMembers = exists('routing_group_members');
  if (hasGroups && hasMembers) {
    const members = db
      .prepare(`SELECT m.group_id AS groupId, g.lane AS lane, m.node_id AS nodeId, m.model AS model, m.restore_after_borrow AS restore
        FROM routing_group_members m JOIN routing_groups g ON g.id = m.group_id
        WHERE m.node_id IS NOT NULL AND m.model IS NOT NULL ORDER BY m.group_id, m.node_id, m.model`)
      .all() as LegacyMember[];
    const groups = new Map<string, LegacyMember[]>();
    for (const m of members) groups.set(m.groupId, [...(groups.get(m.groupId) ?? []), m]);
    const insert =
      db.prepare(`INSERT OR IGNORE INTO links (id, lane, owner_node, owner_model, helper_node, helper_model,
      load_if_unloaded, restore_after_borrow, weights, acknowledged, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 1, ?, 'different', 1, ?, ?)`);
    const now = Date.now();
    let created = 0;
    for (const group of groups.values()) {
      for (const owner of group) {
        for (const helper of group) {
          if (owner.nodeId === helper.nodeId) continue;
          const lane = owner.lane === 'text' || owner.lane === 'llm' ? 'text' : 'image';
          created += insert.run(
            randomUUID(),
            lane,
            owner.nodeId,
            owner.model,
            helper.nodeId,
            helper.model,
            helper.restore ? 1 : 0,
            now,
            now,
          ).changes;
        }
      }
    }
    if (created)
      db.prepare(
        "UPDATE settings SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'links_version'",
      ).run();
  }
  if (hasMembers) db.exec('DROP TABLE routing_group_members');
  if (hasGroups) db.exec('DROP TABLE routing_groups');
}

import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS, type Migration } from './migrations';

export type Db = Database.Database;

/** Opens (creating if needed) `router.db` in the store folder: WAL, foreign keys, migrations applied. */
export function openStore(storeDir: string, migrations: Migration[] = MIGRATIONS): Db {
  mkdirSync(storeDir, { recursive: true });
  const db = new Database(join(storeDir, 'router.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db, migrations);
  return db;
}

export function schemaVersion(db: Db): number {
  return (db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number }).v;
}

export function migrate(db: Db, migrations: Migration[]): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  const current = schemaVersion(db);
  const known = Math.max(0, ...migrations.map((m) => m.version));
  if (current > known) throw new Error(`store schema version ${current} is newer than this build knows (${known}); refusing to open it`);
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (m.version <= current) continue;
    db.transaction(() => {
      if (m.sql) db.exec(m.sql);
      m.run?.(db);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Date.now());
    })();
  }
}

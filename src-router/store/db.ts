import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, type Migration } from './migrations';
import { lockStore, type StoreLock } from './store-lock';

export type Db = Database.Database;

/** Opens (creating if needed) `router.db` in the store folder: WAL, foreign keys, migrations applied. */
export function openStore(storeDir: string, migrations: Migration[] = MIGRATIONS): Db {
  mkdirSync(storeDir, { recursive: true, mode: 0o700 });
  // The store keeps remote clusters' tokens (UI-5): readable by its owner only, and so are its WAL and shared memory
  // files (SQLite gives them the database file's permissions).
  const file = join(storeDir, 'router.db');
  closeSync(openSync(file, 'a', 0o600));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db, migrations);
  return db;
}

/**
 * A node's store: takes `<storeDir>/router.lock` first (a folder another live process uses is refused
 * with `StoreLockedError`, a stale lock is taken over), then opens it. Close the db, then release the lock.
 */
export function openLockedStore(storeDir: string, migrations: Migration[] = MIGRATIONS): { db: Db; lock: StoreLock } {
  const lock = lockStore(storeDir);
  try {
    return { db: openStore(storeDir, migrations), lock };
  } catch (err) {
    lock.release();
    throw err;
  }
}

export function schemaVersion(db: Db): number {
  return (db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number }).v;
}

export function migrate(db: Db, migrations: Migration[]): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
  );
  const current = schemaVersion(db);
  const known = Math.max(0, ...migrations.map((m) => m.version));
  if (current > known)
    throw new Error(`store schema version ${current} is newer than this build knows (${known}); refusing to open it`);
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (m.version <= current) continue;
    db.transaction(() => {
      if (m.sql) db.exec(m.sql);
      m.run?.(db);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        Date.now(),
      );
    })();
  }
}

/** Opens an existing store read-only (a replay reads a node's store, even one a live node holds): no migrations, no lock. */
export function openStoreReadOnly(storeDir: string): Db {
  const file = join(storeDir, 'router.db');
  if (!existsSync(file))
    throw Object.assign(new Error(`no store at ${storeDir} (router.db missing)`), { code: 'store_missing' });
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return db;
}

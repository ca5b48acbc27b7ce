import type { Db } from './db';

/**
 * Version counters in the `settings` table (`links_version`, `guardians_version`): bumped on every change of what
 * they count, pushed with it by the master, and set to the master's value by a slave applying a push (LEASE-1).
 */
export const settingsCounter = (db: Db, key: string) => ({
  read(): number {
    const row = db.prepare('SELECT value FROM settings WHERE key = ?').get(key) as { value: string } | undefined;
    return row ? Number(row.value) : 0;
  },
  bump(): void {
    db.prepare(
      "INSERT INTO settings (key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
    ).run(key);
  },
  set(version: number): void {
    db.prepare(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
    ).run(key, String(version));
  },
});

export type SettingsCounter = ReturnType<typeof settingsCounter>;

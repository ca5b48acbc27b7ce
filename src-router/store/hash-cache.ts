import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import type { Db } from './db';

/** sha256 of a weights file, cached by path + size + mtime so a restart does not re-read gigabytes (ID-1). */
export class ModelHashCache {
  constructor(private readonly db: Db) {}

  cached(path: string): string | undefined {
    const st = statSync(path);
    const row = this.db
      .prepare('SELECT sha256 FROM model_hashes WHERE path = ? AND size = ? AND mtime_ms = ?')
      .get(path, st.size, Math.floor(st.mtimeMs)) as { sha256: string } | undefined;
    return row?.sha256;
  }

  async hash(path: string): Promise<string> {
    const st = statSync(path);
    const hit = this.cached(path);
    if (hit) return hit;
    const sha256 = await sha256File(path);
    this.db
      .prepare(
        'INSERT INTO model_hashes (path, size, mtime_ms, sha256, computed_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, sha256 = excluded.sha256, computed_at = excluded.computed_at',
      )
      .run(path, st.size, Math.floor(st.mtimeMs), sha256, Date.now());
    return sha256;
  }
}

export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => h.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}

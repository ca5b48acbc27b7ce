import { createHash } from 'node:crypto';
import { type Stats, statSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { openRegularFile } from '../config/regular-file';
import type { Db } from './db';

/** sha256 of a weights file, cached by path + size + mtime so a restart does not re-read gigabytes (ID-1). */
export class ModelHashCache {
  constructor(private readonly db: Db) {}

  cached(path: string): string | undefined {
    return this.lookup(path, statSync(path));
  }

  private lookup(path: string, st: Pick<Stats, 'size' | 'mtimeMs'>): string | undefined {
    const row = this.db
      .prepare('SELECT sha256 FROM model_hashes WHERE path = ? AND size = ? AND mtime_ms = ?')
      .get(path, st.size, Math.floor(st.mtimeMs)) as { sha256: string } | undefined;
    return row?.sha256;
  }

  /** The file is opened once (a regular file only: a FIFO is refused, never read) and hashed through that handle. */
  async hash(path: string): Promise<string> {
    const { handle, stats } = await openRegularFile(path);
    try {
      const hit = this.lookup(path, stats);
      if (hit) return hit;
      const sha256 = await sha256Of(handle);
      this.db
        .prepare(
          'INSERT INTO model_hashes (path, size, mtime_ms, sha256, computed_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, sha256 = excluded.sha256, computed_at = excluded.computed_at',
        )
        .run(path, stats.size, Math.floor(stats.mtimeMs), sha256, Date.now());
      return sha256;
    } finally {
      await handle.close();
    }
  }
}

/** sha256 of a regular file, opened once (see `ModelHashCache.hash`). */
export async function sha256File(path: string): Promise<string> {
  const { handle } = await openRegularFile(path);
  try {
    return await sha256Of(handle);
  } finally {
    await handle.close();
  }
}

function sha256Of(handle: FileHandle): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    handle
      .createReadStream({ start: 0, autoClose: false })
      .on('data', (chunk) => h.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}

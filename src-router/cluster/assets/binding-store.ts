import type { Db } from '../../store';

export type BindingResult = 'bound' | 'substituted' | 'rejected';

export interface AssetBindingInput {
  /** What was asked for: a name, or the hash itself. */
  reference: string;
  sha256: string;
  /** The node (id or URL) the asset came or would have come from; null when local only. */
  fromNode: string | null;
  /** Absolute path of the bound file; null when rejected before a place was chosen. */
  path: string | null;
  result: BindingResult;
  reason: string | null;
}

export interface AssetBinding extends AssetBindingInput {
  id: number;
  at: number;
}

interface Row {
  id: number;
  at: number;
  reference: string;
  sha256: string;
  from_node: string | null;
  path: string | null;
  result: BindingResult;
  reason: string | null;
}

const fromRow = (r: Row): AssetBinding => ({
  id: r.id,
  at: r.at,
  reference: r.reference,
  sha256: r.sha256,
  fromNode: r.from_node,
  path: r.path,
  result: r.result,
  reason: r.reason,
});

/** ASSET-2: every binding, substitution and rejection of an asset, in `asset_bindings` (migration 2). */
export class AssetBindingStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  record(b: AssetBindingInput): AssetBinding {
    const at = this.now();
    const info = this.db
      .prepare(
        'INSERT INTO asset_bindings (at, reference, sha256, from_node, path, result, reason) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(at, b.reference, b.sha256, b.fromNode, b.path, b.result, b.reason);
    return { ...b, id: Number(info.lastInsertRowid), at };
  }

  /** Newest first; optionally for one hash or one result. */
  list(filter: { sha256?: string; result?: BindingResult; limit?: number } = {}): AssetBinding[] {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (filter.sha256) {
      where.push('sha256 = ?');
      args.push(filter.sha256);
    }
    if (filter.result) {
      where.push('result = ?');
      args.push(filter.result);
    }
    const sql = `SELECT * FROM asset_bindings ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
    return (this.db.prepare(sql).all(...args, Math.max(1, Math.min(filter.limit ?? 100, 10_000))) as Row[]).map(
      fromRow,
    );
  }

  /** The newest successful binding of a hash (bound or substituted). */
  current(sha256: string): AssetBinding | undefined {
    const row = this.db
      .prepare(
        "SELECT * FROM asset_bindings WHERE sha256 = ? AND result IN ('bound', 'substituted') ORDER BY id DESC LIMIT 1",
      )
      .get(sha256) as Row | undefined;
    return row && fromRow(row);
  }
}

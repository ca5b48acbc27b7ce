import { stat } from 'node:fs/promises';
import type { ModelHashCache } from '../../store';
import { isAssetError } from './errors';
import type { FileRoots, ListOptions } from './file-roots';

/** A file inside a root whose sha256 was computed (through the hash cache) from its current size and mtime. */
export interface IndexedAsset {
  sha256: string;
  root: string;
  relPath: string;
  absPath: string;
  size: number;
  mtimeMs: number;
}

export interface AssetIndexOptions {
  list?: ListOptions;
  /** A miss re-walks the roots at most this often (default 2 s). */
  refreshMinIntervalMs?: number;
  now?(): number;
}

/**
 * ASSET-2: files of the roots by verified sha256. Hashes come from `ModelHashCache` (path + size + mtime), so a walk
 * after the first costs a stat and a query per file. A hit is re-checked (still inside its root, same hash) before it
 * is returned; a miss re-walks the roots, at most once per `refreshMinIntervalMs`, with one walk in flight at a time.
 */
export class AssetIndex {
  private byHash = new Map<string, IndexedAsset>();
  private walking?: Promise<void>;
  private lastWalk = -Infinity;
  private readonly now: () => number;

  constructor(
    private readonly roots: FileRoots,
    private readonly hashCache: ModelHashCache,
    private readonly opts: AssetIndexOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** The file with this sha256 (lowercase hex), verified now, or undefined. */
  async find(sha256: string): Promise<IndexedAsset | undefined> {
    const known = await this.verified(this.byHash.get(sha256), sha256);
    if (known) return known;
    if (this.now() - this.lastWalk >= (this.opts.refreshMinIntervalMs ?? 2000) || this.walking) await this.refresh();
    return this.verified(this.byHash.get(sha256), sha256);
  }

  /** Every file of every root hashed (cached hashes reused); one walk at a time. */
  refresh(): Promise<void> {
    this.walking ??= this.walk().finally(() => {
      this.walking = undefined;
      this.lastWalk = this.now();
    });
    return this.walking;
  }

  /** A walk in the background unless one ran within `refreshMinIntervalMs` (inventory views show new files' hashes soon). */
  refreshSoon(): void {
    if (!this.walking && this.now() - this.lastWalk >= (this.opts.refreshMinIntervalMs ?? 2000))
      void this.refresh().catch(() => undefined);
  }

  /** The current index, for inventory views (no re-check). */
  entries(): IndexedAsset[] {
    return [...this.byHash.values()];
  }

  private async walk(): Promise<void> {
    const next = new Map<string, IndexedAsset>();
    const inv = await this.roots.listAll(this.opts.list);
    for (const e of inv.entries) {
      const asset = await this.hashOf(e.root, e.path);
      if (asset && !next.has(asset.sha256)) next.set(asset.sha256, asset);
    }
    this.byHash = next;
  }

  private async hashOf(root: string, relPath: string): Promise<IndexedAsset | undefined> {
    try {
      const r = await this.roots.resolveFile(root, relPath);
      const st = await stat(r.absPath);
      const sha256 = await this.hashCache.hash(r.absPath);
      return { sha256, root, relPath: r.relPath, absPath: r.absPath, size: st.size, mtimeMs: Math.floor(st.mtimeMs) };
    } catch (err) {
      if (isAssetError(err) || (err as NodeJS.ErrnoException).code) return undefined; // gone, moved, or now outside
      throw err;
    }
  }

  private async verified(asset: IndexedAsset | undefined, sha256: string): Promise<IndexedAsset | undefined> {
    if (!asset) return undefined;
    const now = await this.hashOf(asset.root, asset.relPath);
    if (now?.sha256 === sha256) {
      this.byHash.set(sha256, now);
      return now;
    }
    this.byHash.delete(sha256);
    if (now) this.byHash.set(now.sha256, now);
    return undefined;
  }
}

const indexes = new WeakMap<FileRoots, WeakMap<ModelHashCache, AssetIndex>>();

/** One shared index per (roots, hash cache) pair, so callers need not keep it. */
export function assetIndexFor(roots: FileRoots, hashCache: ModelHashCache): AssetIndex {
  let inner = indexes.get(roots);
  if (!inner) indexes.set(roots, (inner = new WeakMap()));
  let index = inner.get(hashCache);
  if (!index) inner.set(hashCache, (index = new AssetIndex(roots, hashCache)));
  return index;
}

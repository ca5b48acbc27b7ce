import type { AssetFetchRequest } from '../../contract';
import type { Db, ModelHashCache } from '../../store';
import { type AssetIndex, assetIndexFor } from './asset-index';
import { AssetBindingStore } from './binding-store';
import { AssetError, normalizeSha256 } from './errors';
import { type FetchAssetResult, fetchAsset, safeAssetFileName } from './fetch-asset';
import type { FileRoots, InventoryEntry, ListOptions } from './file-roots';
import { loadRecipe, type RecipeLoadResult } from './recipe-cluster';
import { type Recipe, RecipeStore, type StoredRecipe } from './recipes';
import { type AssetRead, openAssetRead } from './transfer';

export interface AssetServiceOptions {
  roots: FileRoots;
  hashCache: ModelHashCache;
  db: Db;
  /** Cluster token: peers serve assets only to holders of it. */
  token: string;
  /** `models.asset_max_bytes`: a fetch is cut past this size (413). */
  maxBytes: number;
  transferTimeoutMs: number;
  /** The configured node relationship (ASSET-3): `cluster.slave_urls` plus `cluster.master_url`. */
  relatedUrls: readonly string[];
  /** The URL of a node of the relationship by node id, or undefined. */
  nodeUrl(nodeId: string): Promise<string | undefined>;
  /** Explicit recipe loading: this node's id, its supervisor's preload, the longest wait for a remote load. */
  localNodeId: string;
  preloadLocal(localId: string): Promise<void>;
  loadTimeoutMs: number;
  list?: ListOptions;
  fetchImpl?: typeof fetch;
}

export interface InventoryItem extends InventoryEntry {
  /** From the asset index when it has hashed this file as it is now; null until then. */
  sha256: string | null;
}

/** ASSET-1..3 on one node: its file roots, the hash index over them, bindings and recipes in its store. */
export class AssetService {
  readonly index: AssetIndex;
  readonly bindings: AssetBindingStore;
  readonly recipes: RecipeStore;

  constructor(private readonly opts: AssetServiceOptions) {
    this.index = assetIndexFor(opts.roots, opts.hashCache);
    this.bindings = new AssetBindingStore(opts.db);
    this.recipes = new CachedRecipeStore(opts.db);
  }

  get roots(): FileRoots {
    return this.opts.roots;
  }

  /** Hashes every file of the roots (cached hashes reused); start-up runs it in the background. */
  warm(): Promise<void> {
    return this.index.refresh();
  }

  /** The file with this verified hash, for serving (`not_found`, `invalid_hash`). */
  open(sha256: string): Promise<AssetRead> {
    return openAssetRead(this.opts.roots, this.opts.hashCache, sha256, this.index);
  }

  /**
   * Files of one root (or all), optionally below one folder of it; the folder is checked like any path (`..`,
   * absolute paths outside the root, symlinks leaving it: `path_outside_root`).
   */
  async inventory(
    root?: string,
    path?: string,
  ): Promise<{ roots: string[]; entries: InventoryItem[]; truncated: boolean }> {
    const { roots } = this.opts;
    if (path !== undefined && root === undefined) throw new AssetError('invalid_path', 'path needs a root', 'root');
    let prefix: string | undefined;
    if (root !== undefined && path !== undefined && path !== '') {
      const dir = await roots.resolve(root, path);
      if (dir.kind !== 'directory')
        throw new AssetError('not_found', `no folder '${dir.relPath}' in '${root}'`, 'path');
      prefix = `${dir.relPath}/`;
    }
    const inv = root === undefined ? await roots.listAll(this.opts.list) : await roots.list(root, this.opts.list);
    const hashed = new Map(this.index.entries().map((a) => [`${a.root}\u0000${a.relPath}`, a]));
    const entries = inv.entries
      .filter((e) => prefix === undefined || e.path.startsWith(prefix))
      .map((e) => {
        const a = hashed.get(`${e.root}\u0000${e.path}`);
        return { ...e, sha256: a && a.size === e.size && a.mtimeMs === e.mtimeMs ? a.sha256 : null };
      });
    if (entries.some((e) => e.sha256 === null)) this.index.refreshSoon();
    return { roots: await roots.usableNames(), entries, truncated: inv.truncated }; // protected folders are never listed
  }

  /**
   * ASSET-2/3: the file with `sha256` from a node of the relationship into a local root (default `shared` when
   * configured, else `models`), under a file name chosen here. Every outcome is a binding row. A target in
   * a protected folder (the models config folder — so the `models` root of a node config —, the store) is refused
   * (403 `protected_folder`) and recorded as rejected.
   */
  async fetch(req: AssetFetchRequest): Promise<FetchAssetResult> {
    const { roots } = this.opts;
    const root = req.root ?? (roots.has('shared') ? 'shared' : 'models');
    const reference = req.name ?? req.sha256.toLowerCase();
    let baseUrl = req.url;
    const fromNode = req.nodeId ?? req.url!;
    if (req.nodeId !== undefined) {
      baseUrl = await this.opts.nodeUrl(req.nodeId);
      if (!baseUrl) {
        const err = new AssetError(
          'source_not_configured',
          `node '${req.nodeId}' is not a configured node of this cluster`,
          'nodeId',
        );
        this.bindings.record({
          reference,
          sha256: req.sha256.toLowerCase(),
          fromNode,
          path: null,
          result: 'rejected',
          reason: `${err.code}: ${err.message}`,
        });
        throw err;
      }
    }
    return fetchAsset({
      baseUrl: baseUrl!,
      token: this.opts.token,
      sha256: req.sha256,
      expectedSize: req.expectedSize,
      maxBytes: this.opts.maxBytes,
      destRoot: { roots, root },
      destRelPath: safeAssetFileName(req.name, safeSha(req.sha256)),
      timeoutMs: this.opts.transferTimeoutMs,
      bindings: this.bindings,
      hashCache: this.opts.hashCache,
      reference,
      fromNode,
      allowedBaseUrls: this.opts.relatedUrls,
      fetchImpl: this.opts.fetchImpl,
    });
  }

  /** ASSET-4: prepares every component of a recipe, here and on the other nodes; per component what happened. */
  loadRecipe(recipe: Recipe): Promise<RecipeLoadResult> {
    const o = this.opts;
    return loadRecipe(recipe, {
      localNodeId: o.localNodeId,
      preloadLocal: o.preloadLocal,
      nodeUrl: o.nodeUrl,
      token: o.token,
      timeoutMs: o.loadTimeoutMs,
      fetchImpl: o.fetchImpl,
    });
  }
}

/** Recipes read from memory (every client request asks whether its model names one); writes go through and refresh it. */
class CachedRecipeStore extends RecipeStore {
  private byName?: Map<string, StoredRecipe>;

  private all(): Map<string, StoredRecipe> {
    return (this.byName ??= new Map(super.list().map((r) => [r.name, r])));
  }

  override list(): StoredRecipe[] {
    return [...this.all().values()];
  }

  override get(name: string): StoredRecipe | undefined {
    return this.all().get(name);
  }

  override put(input: unknown): { recipe: StoredRecipe; created: boolean } {
    try {
      return super.put(input);
    } finally {
      this.byName = undefined;
    }
  }

  override delete(name: string): boolean {
    try {
      return super.delete(name);
    } finally {
      this.byName = undefined;
    }
  }
}

/** The hash for a file name only; a malformed one is refused (and recorded) by `fetchAsset` itself. */
function safeSha(sha256: string): string {
  try {
    return normalizeSha256(sha256);
  } catch {
    return 'invalid';
  }
}

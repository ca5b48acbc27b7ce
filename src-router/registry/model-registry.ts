import type { ModelConfigFile } from '../config';
import type { ModelHashCache } from '../store';
import { configHash } from './config-hash';

/** A model config on this node, as the registry knows it (ID-1). */
export interface LocalModelRecord {
  publicId: string;
  localId: string;
  file: string;
  config: ModelConfigFile['config'];
  configHash: string;
  /** sha256 of the weights file; null when there is none (or not yet computed). */
  modelHash: string | null;
}

/**
 * The local model records of a node. Configs sharing a `name` are replicas of one public ID and rotate (ID-4). The
 * models folder's watcher adds, replaces and removes records while the node runs.
 */
export class ModelRegistry {
  private readonly byLocal = new Map<string, LocalModelRecord>();
  private readonly byPublic = new Map<string, LocalModelRecord[]>();
  private readonly cursor = new Map<string, number>();

  constructor(files: ModelConfigFile[]) {
    for (const f of files) {
      if (this.byLocal.has(f.localId))
        throw new Error(`two model configs have the local ID '${f.localId}' (${f.file})`);
      this.upsert(f, null);
    }
  }

  /** Adds the config of `f.localId`, or replaces it (a config taken in while the node runs). */
  upsert(f: ModelConfigFile, modelHash: string | null): LocalModelRecord {
    this.remove(f.localId);
    const rec: LocalModelRecord = {
      publicId: f.config.name,
      localId: f.localId,
      file: f.file,
      config: f.config,
      configHash: configHash(f.config),
      modelHash,
    };
    this.byLocal.set(f.localId, rec);
    const list = this.byPublic.get(rec.publicId) ?? [];
    list.push(rec);
    this.byPublic.set(rec.publicId, list);
    return rec;
  }

  /** Forgets the config of `localId`; false when there was none. */
  remove(localId: string): boolean {
    const rec = this.byLocal.get(localId);
    if (!rec) return false;
    this.byLocal.delete(localId);
    const list = (this.byPublic.get(rec.publicId) ?? []).filter((r) => r !== rec);
    if (list.length) this.byPublic.set(rec.publicId, list);
    else this.byPublic.delete(rec.publicId);
    return true;
  }

  /** Fills model hashes from the weights files (cached in the store by path + size + mtime). */
  async computeHashes(cache: ModelHashCache, onError?: (rec: LocalModelRecord, err: Error) => void): Promise<void> {
    for (const rec of this.byLocal.values()) {
      if (!rec.config.model) continue;
      try {
        rec.modelHash = await cache.hash(rec.config.model);
      } catch (err) {
        onError?.(rec, err as Error);
      }
    }
  }

  all(): LocalModelRecord[] {
    return [...this.byLocal.values()];
  }

  publicIds(): string[] {
    return [...this.byPublic.keys()];
  }

  byLocalId(localId: string): LocalModelRecord | undefined {
    return this.byLocal.get(localId);
  }

  replicas(publicId: string): LocalModelRecord[] {
    return this.byPublic.get(publicId) ?? [];
  }

  /** Resolves a name a client or operator used: a public ID, else a local ID. */
  resolve(name: string): LocalModelRecord[] {
    const replicas = this.replicas(name);
    if (replicas.length) return replicas;
    const rec = this.byLocal.get(name);
    return rec ? [rec] : [];
  }

  /** Round-robin over the eligible replicas of one public ID. */
  rotate(publicId: string, eligible: LocalModelRecord[]): LocalModelRecord | undefined {
    if (!eligible.length) return undefined;
    const i = this.cursor.get(publicId) ?? 0;
    this.cursor.set(publicId, i + 1);
    return eligible[i % eligible.length];
  }
}

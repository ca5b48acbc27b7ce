import { lstat, opendir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep, win32 } from 'node:path';
import type { NodeConfig } from '../../config';
import { AssetError } from './errors';

/** Prefix of the temp files a transfer writes; never listed, never served. */
export const PARTIAL_PREFIX = '.routerdesk-partial-';

/** A path inside a root, checked: `absPath` is where to read or write (symlinks inside the root already followed). */
export interface ResolvedPath {
  root: string;
  /** Relative to the root, `/`-separated, no `.`/`..` segments. */
  relPath: string;
  absPath: string;
  exists: boolean;
  kind: 'file' | 'directory' | 'other' | null;
}

export interface InventoryEntry {
  root: string;
  path: string;
  size: number;
  mtimeMs: number;
}

export interface Inventory {
  entries: InventoryEntry[];
  /** The walk stopped at `maxEntries` (deeper folders past `maxDepth` are skipped silently). */
  truncated: boolean;
}

export interface ListOptions {
  maxDepth?: number;
  maxEntries?: number;
}

const inside = (root: string, p: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
const errnoOf = (err: unknown) => (err as NodeJS.ErrnoException).code;

/**
 * ASSET-3: the only folders asset and management operations may read, list or write. Every path is relative to a
 * named root; `..` segments, NUL bytes, absolute paths outside the root and symlinks whose target leaves the root
 * are refused. Roots are checked by their real path at each call, so a root that is itself a symlink works.
 */
export class FileRoots {
  private readonly roots = new Map<string, string>();

  /** Roots with an empty folder (an unset `models.shared_dir`, say) are left out. */
  constructor(roots: Record<string, string>) {
    for (const [name, dir] of Object.entries(roots)) {
      if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`file root name '${name}': letters, digits, dot, dash, underscore`);
      if (dir) this.roots.set(name, resolve(dir));
    }
  }

  names(): string[] {
    return [...this.roots.keys()];
  }

  has(name: string): boolean {
    return this.roots.has(name);
  }

  /** The configured folder of a root (as configured, absolute; not the real path). */
  dir(name: string): string {
    const dir = this.roots.get(name);
    if (dir === undefined) throw new AssetError('unknown_root', `no file root named '${name}' (known: ${this.names().join(', ') || 'none'})`, 'root');
    return dir;
  }

  /** The real path of a root; `not_found` when the folder does not exist. */
  async realRoot(name: string): Promise<string> {
    const dir = this.dir(name);
    try {
      return await realpath(dir);
    } catch (err) {
      throw new AssetError(errnoOf(err) === 'ENOENT' ? 'not_found' : 'io_error', `file root '${name}' (${dir}): ${(err as Error).message}`, 'root');
    }
  }

  /** Checks a path against a root (see the class). The path need not exist; its deepest existing ancestor is checked. */
  async resolve(rootName: string, relPath: string): Promise<ResolvedPath> {
    const realRoot = await this.realRoot(rootName);
    const segments = this.segments(rootName, realRoot, relPath);
    const outside = () => new AssetError('path_outside_root', `path '${printable(relPath)}' leaves file root '${rootName}'`, 'path');
    // The deepest existing ancestor, by real path: a symlinked folder that leaves the root is caught even when the
    // file below it does not exist yet.
    for (let i = segments.length; i >= 0; i--) {
      const candidate = join(realRoot, ...segments.slice(0, i));
      let real: string;
      try {
        real = await realpath(candidate);
      } catch (err) {
        const code = errnoOf(err);
        if (code === 'ELOOP') throw outside();
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new AssetError('io_error', `${candidate}: ${(err as Error).message}`);
        // A dangling symlink: where it points cannot be checked, so it is not used.
        if (code === 'ENOENT' && (await lstat(candidate).catch(() => null))?.isSymbolicLink()) throw outside();
        continue;
      }
      if (!inside(realRoot, real)) throw outside();
      const rest = segments.slice(i);
      const exists = rest.length === 0;
      const st = exists ? await stat(real) : null;
      return { root: rootName, relPath: segments.join('/'), absPath: rest.length ? join(real, ...rest) : real, exists, kind: st ? (st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other') : null };
    }
    throw outside(); // unreachable: the root itself exists
  }

  /** `resolve`, then requires an existing regular file. */
  async resolveFile(rootName: string, relPath: string): Promise<ResolvedPath> {
    const r = await this.resolve(rootName, relPath);
    if (r.kind !== 'file') throw new AssetError('not_found', r.exists ? `'${r.relPath}' in '${rootName}' is not a regular file` : `no file '${r.relPath}' in '${rootName}'`, 'path');
    return r;
  }

  /**
   * Regular files under a root, depth-first in name order, relative paths. Symlinks are not followed out of the root:
   * a symlinked file is listed (under its own name) only when its target is a regular file inside the root, and
   * symlinked folders are never walked (no cycles, no double listing). Transfer temp files are left out.
   */
  async list(rootName: string, opts: ListOptions = {}): Promise<Inventory> {
    const maxDepth = opts.maxDepth ?? 8;
    const maxEntries = opts.maxEntries ?? 10_000;
    const realRoot = await this.realRoot(rootName);
    const entries: InventoryEntry[] = [];
    let truncated = false;
    const walk = async (dir: string, rel: string[], depth: number): Promise<void> => {
      let names: { name: string; isFile: boolean; isDir: boolean; isLink: boolean }[];
      try {
        const d = await opendir(dir);
        names = [];
        for await (const e of d) names.push({ name: e.name, isFile: e.isFile(), isDir: e.isDirectory(), isLink: e.isSymbolicLink() });
      } catch {
        return; // unreadable folder: nothing to show
      }
      names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of names) {
        if (truncated) return;
        if (e.name.startsWith(PARTIAL_PREFIX)) continue;
        const abs = join(dir, e.name);
        const relParts = [...rel, e.name];
        if (e.isDir) {
          if (depth < maxDepth) await walk(abs, relParts, depth + 1);
          continue;
        }
        if (!e.isFile && !e.isLink) continue;
        if (e.isLink) {
          const real = await realpath(abs).catch(() => null);
          if (!real || !inside(realRoot, real)) continue;
        }
        const st = await stat(abs).catch(() => null);
        if (!st?.isFile()) continue;
        if (entries.length >= maxEntries) {
          truncated = true;
          return;
        }
        entries.push({ root: rootName, path: relParts.join('/'), size: st.size, mtimeMs: Math.floor(st.mtimeMs) });
      }
    };
    await walk(realRoot, [], 1);
    return { entries, truncated };
  }

  /** Every root's inventory; a root whose folder is missing lists nothing. */
  async listAll(opts: ListOptions = {}): Promise<Inventory> {
    const out: Inventory = { entries: [], truncated: false };
    for (const name of this.names()) {
      const inv = await this.list(name, opts).catch((err: unknown) => {
        if (err instanceof AssetError && err.code === 'not_found') return { entries: [], truncated: false };
        throw err;
      });
      out.entries.push(...inv.entries);
      out.truncated ||= inv.truncated;
    }
    return out;
  }

  /** Lexical checks: NUL, empty, `..`, absolute paths (allowed only inside the root). Returns clean segments. */
  private segments(rootName: string, realRoot: string, relPath: string): string[] {
    if (typeof relPath !== 'string' || relPath.includes('\0')) throw new AssetError('invalid_path', 'path contains a NUL byte', 'path');
    let p = relPath.replace(/\\/g, '/');
    const windows = process.platform === 'win32';
    // A drive path on a node that has no drives is never inside a root.
    if (!windows && /^[A-Za-z]:/.test(p)) throw new AssetError('path_outside_root', `path '${printable(relPath)}' is a drive path outside file root '${rootName}'`, 'path');
    if (isAbsolute(p) || (windows && win32.isAbsolute(relPath))) {
      const configured = this.dir(rootName);
      const from = [realRoot, configured].map((r) => relative(r, resolve(p))).find((r) => r === '' || (!r.startsWith('..') && !isAbsolute(r)));
      if (from === undefined) throw new AssetError('path_outside_root', `absolute path '${printable(relPath)}' is outside file root '${rootName}'`, 'path');
      p = from.split(sep).join('/');
    }
    const parts = p.split('/').filter((s) => s !== '' && s !== '.');
    if (parts.includes('..')) throw new AssetError('path_outside_root', `path '${printable(relPath)}' has a '..' segment`, 'path');
    if (!parts.length) throw new AssetError('invalid_path', 'path is empty (names the root itself)', 'path');
    return parts;
  }
}

const printable = (s: string) => s.replace(/[\u0000-\u001f]/g, '?').slice(0, 200);

/** The roots of a node config: `models` = `models.config_dir` (weights sit next to their YAML), `shared` = `models.shared_dir`. */
export function fileRootsFromConfig(config: { models: Pick<NodeConfig['models'], 'config_dir' | 'shared_dir'> & Partial<NodeConfig['models']> }, extra: Record<string, string> = {}): FileRoots {
  return new FileRoots({ models: config.models.config_dir, shared: config.models.shared_dir, ...extra });
}

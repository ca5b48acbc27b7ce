import { lstat, opendir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep, win32 } from 'node:path';
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

/**
 * A folder no file root may expose, whatever root it lies in: the models config folder (a `*.yaml` written
 * there is loaded at the next start and its `command` run; configs carry `env`), the store, the node config's folder.
 */
export interface ProtectedFolder {
  dir: string;
  /** For messages: "the models config folder (models.config_dir)". */
  what: string;
  /**
   * `dir` is a file (the node config): it is protected with every file the config writer makes beside it, whose
   * name is the file's own followed by a dot (`node.yaml.bak`, `node.yaml.tmp-…`, `node.yaml.bak.tmp-…`).
   */
  file?: boolean;
}

export interface FileRootsOptions {
  /** Folders that are never listed, read or written through any root (empty entries are ignored). */
  protected?: readonly ProtectedFolder[];
}

/** A protected folder as checked at one call: its configured and real paths, and its identity when it exists. */
interface Guard extends ProtectedFolder {
  paths: string[];
  id: string | null;
}

const dirId = (st: { dev: number; ino: number }) => `${st.dev}:${st.ino}`;

const inside = (root: string, p: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);

/** `p` is a protected folder's path or lies in it; for a protected file: the file or one of its family (see `file`). */
const covers = (guard: { file?: boolean }, gp: string, p: string) =>
  guard.file ? p === gp || (dirname(p) === dirname(gp) && basename(p).startsWith(`${basename(gp)}.`)) : inside(gp, p);
const errnoOf = (err: unknown) => (err as NodeJS.ErrnoException).code;

/**
 * ASSET-3: the only folders asset and management operations may read, list or write. Every path is relative to a
 * named root; `..` segments, NUL bytes, absolute paths outside the root and symlinks whose target leaves the root
 * are refused. Roots are checked by their real path at each call, so a root that is itself a symlink works.
 */
export class FileRoots {
  private readonly roots = new Map<string, string>();
  private readonly protectedFolders: ProtectedFolder[];

  /** Roots with an empty folder (an unset `models.shared_dir`, say) are left out. */
  constructor(roots: Record<string, string>, opts: FileRootsOptions = {}) {
    for (const [name, dir] of Object.entries(roots)) {
      if (!/^[A-Za-z0-9._-]+$/.test(name))
        throw new Error(`file root name '${name}': letters, digits, dot, dash, underscore`);
      if (dir) this.roots.set(name, resolve(dir));
    }
    this.protectedFolders = (opts.protected ?? [])
      .filter((f) => f.dir)
      .map((f) => ({ dir: resolve(f.dir), what: f.what, ...(f.file ? { file: true } : {}) }));
  }

  /** The protected folders, absolute as configured. */
  protectedDirs(): ProtectedFolder[] {
    return this.protectedFolders.map((f) => ({ ...f }));
  }

  names(): string[] {
    return [...this.roots.keys()];
  }

  /** The roots that can be used now: configured, not lying in a protected folder (a missing folder still counts). */
  async usableNames(): Promise<string[]> {
    const guards = await this.guards();
    const usable = await Promise.all(
      this.names().map(async (name) => {
        const real = await this.realRoot(name).catch(() => null);
        return !real || !(await this.guardOver(real, real, real, guards));
      }),
    );
    return this.names().filter((_, i) => usable[i]);
  }

  has(name: string): boolean {
    return this.roots.has(name);
  }

  /** The configured folder of a root (as configured, absolute; not the real path). */
  dir(name: string): string {
    const dir = this.roots.get(name);
    if (dir === undefined)
      throw new AssetError(
        'unknown_root',
        `no file root named '${name}' (known: ${this.names().join(', ') || 'none'})`,
        'root',
      );
    return dir;
  }

  /** The real path of a root; `not_found` when the folder does not exist. */
  async realRoot(name: string): Promise<string> {
    const dir = this.dir(name);
    try {
      return await realpath(dir);
    } catch (err) {
      throw new AssetError(
        errnoOf(err) === 'ENOENT' ? 'not_found' : 'io_error',
        `file root '${name}' (${dir}): ${(err as Error).message}`,
        'root',
      );
    }
  }

  /**
   * Checks a path against a root (see the class). The path need not exist; its deepest existing ancestor is checked.
   * A path inside a protected folder (by configured or real path, or by folder identity: bind mounts, case) is
   * `protected_folder` (403), and so is every path of a root that lies inside one.
   */
  async resolve(rootName: string, relPath: string): Promise<ResolvedPath> {
    const realRoot = await this.realRoot(rootName);
    const guards = await this.guards();
    await this.refuseProtectedRoot(rootName, realRoot, guards);
    const segments = this.segments(rootName, realRoot, relPath);
    const outside = () =>
      new AssetError('path_outside_root', `path '${printable(relPath)}' leaves file root '${rootName}'`, 'path');
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
        if (code !== 'ENOENT' && code !== 'ENOTDIR')
          throw new AssetError('io_error', `${candidate}: ${(err as Error).message}`);
        // A dangling symlink: where it points cannot be checked, so it is not used.
        if (code === 'ENOENT' && (await lstat(candidate).catch(() => null))?.isSymbolicLink()) throw outside();
        continue;
      }
      if (!inside(realRoot, real)) throw outside();
      const rest = segments.slice(i);
      const exists = rest.length === 0;
      const st = exists ? await stat(real) : null;
      const absPath = rest.length ? join(real, ...rest) : real;
      const guard = await this.guardOver(
        absPath,
        exists && !st?.isDirectory() ? dirname(real) : real,
        realRoot,
        guards,
      );
      if (guard) throw protectedError(`path '${printable(relPath)}' in file root '${rootName}'`, guard);
      return {
        root: rootName,
        relPath: segments.join('/'),
        absPath,
        exists,
        kind: st ? (st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other') : null,
      };
    }
    throw outside(); // unreachable: the root itself exists
  }

  /** `resolve`, then requires an existing regular file. */
  async resolveFile(rootName: string, relPath: string): Promise<ResolvedPath> {
    const r = await this.resolve(rootName, relPath);
    if (r.kind !== 'file')
      throw new AssetError(
        'not_found',
        r.exists ? `'${r.relPath}' in '${rootName}' is not a regular file` : `no file '${r.relPath}' in '${rootName}'`,
        'path',
      );
    return r;
  }

  /**
   * Regular files under a root, depth-first in name order, relative paths. Symlinks are not followed out of the root:
   * a symlinked file is listed (under its own name) only when its target is a regular file inside the root, and
   * symlinked folders are never walked (no cycles, no double listing). Transfer temp files are left out, and so is
   * everything inside a protected folder; a root that lies inside one is `protected_folder`.
   */
  async list(rootName: string, opts: ListOptions = {}): Promise<Inventory> {
    const maxDepth = opts.maxDepth ?? 8;
    const maxEntries = opts.maxEntries ?? 10_000;
    const realRoot = await this.realRoot(rootName);
    const guards = await this.guards();
    await this.refuseProtectedRoot(rootName, realRoot, guards);
    const ids = new Set(guards.flatMap((g) => (g.id ? [g.id] : [])));
    const isProtected = (p: string) => guards.some((g) => g.paths.some((gp) => covers(g, gp, p)));
    const entries: InventoryEntry[] = [];
    let truncated = false;
    const walk = async (dir: string, rel: string[], depth: number): Promise<void> => {
      let names: { name: string; isFile: boolean; isDir: boolean; isLink: boolean }[];
      try {
        const d = await opendir(dir);
        names = [];
        for await (const e of d)
          names.push({ name: e.name, isFile: e.isFile(), isDir: e.isDirectory(), isLink: e.isSymbolicLink() });
      } catch {
        return; // unreadable folder: nothing to show
      }
      names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of names) {
        if (truncated) return;
        if (e.name.startsWith(PARTIAL_PREFIX)) continue;
        const abs = join(dir, e.name);
        const relParts = [...rel, e.name];
        if (isProtected(abs)) continue;
        if (e.isDir) {
          if (ids.size && ids.has(dirId((await stat(abs).catch(() => null)) ?? { dev: -1, ino: -1 }))) continue;
          if (depth < maxDepth) await walk(abs, relParts, depth + 1);
          continue;
        }
        if (!e.isFile && !e.isLink) continue;
        if (e.isLink) {
          const real = await realpath(abs).catch(() => null);
          if (!real || !inside(realRoot, real)) continue;
          if (await this.guardOver(real, dirname(real), realRoot, guards)) continue;
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

  /** Every root's inventory; a root whose folder is missing, or that lies in a protected folder, lists nothing. */
  async listAll(opts: ListOptions = {}): Promise<Inventory> {
    const out: Inventory = { entries: [], truncated: false };
    for (const name of this.names()) {
      const inv = await this.list(name, opts).catch((err: unknown) => {
        if (err instanceof AssetError && (err.code === 'not_found' || err.code === 'protected_folder'))
          return { entries: [], truncated: false };
        throw err;
      });
      out.entries.push(...inv.entries);
      out.truncated ||= inv.truncated;
    }
    return out;
  }

  /** The protected folders as they are now: configured and real paths (of their deepest existing ancestor), identity. */
  private async guards(): Promise<Guard[]> {
    return Promise.all(
      this.protectedFolders.map(async (f) => {
        const real = await realish(f.dir);
        const st = await stat(f.dir).catch(() => null);
        return { ...f, paths: real === f.dir ? [f.dir] : [f.dir, real], id: st?.isDirectory() ? dirId(st) : null };
      }),
    );
  }

  /**
   * The protected folder `absPath` lies in: by path, or by the identity of its existing folders from `deepestDir`
   * up to the root (a protected folder reached under another name: a bind mount, another letter case).
   */
  private async guardOver(
    absPath: string,
    deepestDir: string,
    realRoot: string,
    guards: Guard[],
  ): Promise<Guard | undefined> {
    const byPath = guards.find((g) => g.paths.some((p) => covers(g, p, absPath)));
    if (byPath || !guards.some((g) => g.id)) return byPath;
    for (let dir = deepestDir; inside(realRoot, dir); dir = dirname(dir)) {
      const st = await stat(dir).catch(() => null);
      const hit = st && guards.find((g) => g.id === dirId(st));
      if (hit) return hit;
      if (dir === realRoot) break;
    }
    return undefined;
  }

  private async refuseProtectedRoot(rootName: string, realRoot: string, guards: Guard[]): Promise<void> {
    const guard = await this.guardOver(realRoot, realRoot, realRoot, guards);
    if (guard) throw protectedError(`file root '${rootName}'`, guard, 'root');
  }

  /** Lexical checks: NUL, empty, `..`, absolute paths (allowed only inside the root). Returns clean segments. */
  private segments(rootName: string, realRoot: string, relPath: string): string[] {
    if (typeof relPath !== 'string' || relPath.includes('\0'))
      throw new AssetError('invalid_path', 'path contains a NUL byte', 'path');
    let p = relPath.replace(/\\/g, '/');
    const windows = process.platform === 'win32';
    // A drive path on a node that has no drives is never inside a root.
    if (!windows && /^[A-Za-z]:/.test(p))
      throw new AssetError(
        'path_outside_root',
        `path '${printable(relPath)}' is a drive path outside file root '${rootName}'`,
        'path',
      );
    if (isAbsolute(p) || (windows && win32.isAbsolute(relPath))) {
      const configured = this.dir(rootName);
      const from = [realRoot, configured]
        .map((r) => relative(r, resolve(p)))
        .find((r) => r === '' || (!r.startsWith('..') && !isAbsolute(r)));
      if (from === undefined)
        throw new AssetError(
          'path_outside_root',
          `absolute path '${printable(relPath)}' is outside file root '${rootName}'`,
          'path',
        );
      p = from.split(sep).join('/');
    }
    const parts = p.split('/').filter((s) => s !== '' && s !== '.');
    if (parts.includes('..'))
      throw new AssetError('path_outside_root', `path '${printable(relPath)}' has a '..' segment`, 'path');
    if (!parts.length) throw new AssetError('invalid_path', 'path is empty (names the root itself)', 'path');
    return parts;
  }
}

const printable = (s: string) => s.replace(/[\u0000-\u001f]/g, '?').slice(0, 200);

/** The 403 for anything inside a protected folder, naming the folder (by its setting: peers see it) and why. */
function protectedError(subject: string, guard: ProtectedFolder, param = 'path'): AssetError {
  const hint = param === 'root' ? '; use another root (models.shared_dir) for assets' : '';
  return new AssetError(
    'protected_folder',
    guard.file
      ? `${subject} is ${guard.what} or a backup or temporary copy of it: config files are never an asset source or target${hint}`
      : `${subject} is in ${guard.what}: config folders and the store are never an asset source or target${hint}`,
    param,
  );
}

/** The real path of `p`'s deepest existing ancestor joined with the rest (`p` need not exist); `p` when nothing resolves. */
async function realish(p: string): Promise<string> {
  const rest: string[] = [];
  for (let cur = p; ; ) {
    const real = await realpath(cur).catch(() => null);
    if (real) return rest.length ? join(real, ...rest.reverse()) : real;
    const parent = dirname(cur);
    if (parent === cur) return p;
    rest.push(cur.slice(parent.length).replace(/^[\\/]+/, ''));
    cur = parent;
  }
}

/**
 * The roots of a node config: `models` = `models.config_dir`, `shared` = `models.shared_dir`. The models
 * config folder, the store (`cluster.store_dir`) and, when given, the node config file's folder are protected in
 * every root, so the `models` root itself lists nothing and takes nothing (assets go to `models.shared_dir`); it
 * stays named so a request for it gets a 403 saying why rather than an unknown root.
 */
export function fileRootsFromConfig(
  config: {
    models: Pick<NodeConfig['models'], 'config_dir' | 'shared_dir'> & Partial<NodeConfig['models']>;
    cluster?: Pick<NodeConfig['cluster'], 'store_dir'>;
    server?: Partial<Pick<NodeConfig['server'], 'api_keys_file'>>;
  },
  extra: Record<string, string> = {},
  opts: { configFile?: string } = {},
): FileRoots {
  return new FileRoots(
    { models: config.models.config_dir, shared: config.models.shared_dir, ...extra },
    {
      protected: [
        { dir: config.models.config_dir, what: 'the models config folder (models.config_dir)' },
        { dir: config.cluster?.store_dir ?? '', what: 'the store (cluster.store_dir)' },
        // The node config file itself (it holds the tokens) with its backup and temporaries, not its folder: that
        // folder often holds shared_dir too.
        { dir: opts.configFile ? resolve(opts.configFile) : '', what: 'the node config file', file: true },
        {
          dir: config.server?.api_keys_file ?? '',
          what: 'the client API keys file (server.api_keys_file)',
          file: true,
        },
      ],
    },
  );
}

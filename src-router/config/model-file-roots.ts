import { opendir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { MODEL_FILES_MAX_ENTRIES, type ModelFileEntry, type ModelFileList, RouterError } from '../contract';
import type { NodeConfig } from './node-config';
import { NotARegularFile, type OpenedFile, openedPath, openRegularFile } from './regular-file';

/** Names read from one folder at most before sorting (a folder of millions of files is not read to its end). */
const MAX_NAMES_READ = 20_000;

const SETTINGS_KEYS = 'models.shared_dir, models.config_dir, models.browse_dirs';

const inside = (root: string, p: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
const errnoOf = (err: unknown) => (err as NodeJS.ErrnoException).code;
const printable = (s: string) => s.replace(/[\u0000-\u001f]/g, '?').slice(0, 300);
const isGguf = (name: string) => name.toLowerCase().endsWith('.gguf');

/**
 * The folders the Add model dialog may browse and read GGUF headers in: `models.shared_dir`, `models.config_dir` and
 * `models.browse_dirs`. Every path is checked by its real path (symlinks followed) at each call: anything whose real
 * path leaves every root is refused with 403, so a symlink inside a root cannot lead out of it.
 */
export class ModelFileRoots {
  private readonly configured: string[];

  constructor(dirs: readonly string[]) {
    this.configured = [...new Set(dirs.filter(Boolean).map((d) => resolve(d)))];
  }

  static fromConfig(config: {
    models: Pick<NodeConfig['models'], 'shared_dir' | 'config_dir'> & { browse_dirs?: readonly string[] };
  }): ModelFileRoots {
    return new ModelFileRoots([
      config.models.shared_dir,
      config.models.config_dir,
      ...(config.models.browse_dirs ?? []),
    ]);
  }

  /** The real paths of the roots that exist now, in configured order. */
  async realRoots(): Promise<string[]> {
    const real = await Promise.all(this.configured.map((d) => realpath(d).catch(() => null)));
    return [...new Set(real.filter((r): r is string => r !== null))];
  }

  /**
   * The real path of `path` when it lies inside a root: 400 for a path that is not absolute or holds a NUL byte, 404
   * when nothing is there, 403 when its real path is outside every root. `param` names the request field blamed.
   */
  async resolve(path: string, param: string): Promise<{ real: string; roots: string[] }> {
    if (path.includes('\0'))
      throw new RouterError(
        400,
        'invalid_path',
        `${param}: the path contains a NUL byte`,
        'invalid_request_error',
        param,
      );
    if (!isAbsolute(path))
      throw new RouterError(
        400,
        'invalid_path',
        `${param}: '${printable(path)}' is not an absolute path`,
        'invalid_request_error',
        param,
      );
    const roots = await this.realRoots();
    let real: string;
    try {
      real = await realpath(path);
    } catch (err) {
      const code = errnoOf(err);
      // Whether a path outside the roots exists is none of the caller's business: the same 403 either way.
      if (!roots.some((r) => inside(r, resolve(path)))) throw outsideRoots(path, param, roots);
      if (code === 'ENOENT' || code === 'ENOTDIR')
        throw new RouterError(
          404,
          'file_not_found',
          `${param}: nothing at '${printable(path)}'`,
          'invalid_request_error',
          param,
        );
      if (code === 'ELOOP') throw outsideRoots(path, param, roots);
      throw new RouterError(
        403,
        'file_unreadable',
        `${param}: '${printable(path)}' cannot be read: ${(err as Error).message}`,
        'permission_error',
        param,
      );
    }
    if (!roots.some((r) => inside(r, real))) throw outsideRoots(path, param, roots);
    return { real, roots };
  }

  /**
   * Opens the file at `path` inside a root for reading, once: its real path is opened without following a symlink
   * put there since (O_NOFOLLOW), anything but a regular file is refused without blocking (O_NONBLOCK: a FIFO, a
   * device), and where the kernel says where the open file is (Linux), that must be inside a root too. The caller
   * reads through `file.handle` only, and closes it.
   */
  async openFile(path: string, param: string): Promise<{ real: string; file: OpenedFile }> {
    const { real, roots } = await this.resolve(path, param);
    let file: OpenedFile;
    try {
      file = await openRegularFile(real, { noFollow: true });
    } catch (err) {
      if (err instanceof NotARegularFile)
        throw new RouterError(
          400,
          'not_a_file',
          `${param}: '${printable(path)}' is ${err.kind}, not a file`,
          'invalid_request_error',
          param,
        );
      const code = errnoOf(err);
      // A symlink swapped in since the path was checked: where it leads was not checked, so it is not followed.
      if (code === 'ELOOP')
        throw new RouterError(
          409,
          'file_changed',
          `${param}: '${printable(path)}' was replaced by a symbolic link while it was opened; try again`,
          'invalid_request_error',
          param,
        );
      if (code === 'ENOENT')
        throw new RouterError(
          404,
          'file_not_found',
          `${param}: nothing at '${printable(path)}'`,
          'invalid_request_error',
          param,
        );
      throw new RouterError(
        403,
        'file_unreadable',
        `${param}: '${printable(path)}' cannot be read: ${(err as Error).message}`,
        'permission_error',
        param,
      );
    }
    const at = await openedPath(file.handle);
    if (at !== null && !roots.some((r) => inside(r, at))) {
      await file.handle.close();
      throw outsideRoots(path, param, roots);
    }
    return { real, file };
  }

  /** One folder's folders and files (folders first, then by name), at most MODEL_FILES_MAX_ENTRIES; no `dir`: the roots. */
  async list(dir: string | undefined): Promise<ModelFileList> {
    if (dir === undefined || dir === '') {
      const roots = await this.realRoots();
      return {
        roots,
        dir: null,
        parent: null,
        entries: roots.map((r) => ({ name: r, path: r, kind: 'dir' as const, size: null, gguf: false })),
        truncated: false,
      };
    }
    const { real, roots } = await this.resolve(dir, 'dir');
    const st = await stat(real);
    if (!st.isDirectory())
      throw new RouterError(
        400,
        'not_a_folder',
        `dir: '${printable(dir)}' is not a folder`,
        'invalid_request_error',
        'dir',
      );
    const names: string[] = [];
    let more = false;
    try {
      const handle = await opendir(real);
      for await (const e of handle) {
        if (names.length >= MAX_NAMES_READ) {
          more = true;
          break;
        }
        names.push(e.name);
      }
    } catch (err) {
      throw new RouterError(
        403,
        'file_unreadable',
        `dir: '${printable(dir)}' cannot be read: ${(err as Error).message}`,
        'permission_error',
        'dir',
      );
    }
    const entries: ModelFileEntry[] = [];
    for (const name of names) {
      const path = join(real, name);
      // Followed through symlinks: an entry whose target leaves every root, or is neither file nor folder, is not shown.
      const target = await realpath(path).catch(() => null);
      if (!target || !roots.some((r) => inside(r, target))) continue;
      const s = await stat(target).catch(() => null);
      if (s?.isDirectory()) entries.push({ name, path, kind: 'dir', size: null, gguf: false });
      else if (s?.isFile()) entries.push({ name, path, kind: 'file', size: s.size, gguf: isGguf(name) });
    }
    entries.sort((a, b) =>
      a.kind !== b.kind ? (a.kind === 'dir' ? -1 : 1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    const up = dirname(real);
    const parent = !roots.includes(real) && roots.some((r) => inside(r, up)) ? up : null;
    return {
      roots,
      dir: real,
      parent,
      entries: entries.slice(0, MODEL_FILES_MAX_ENTRIES),
      truncated: more || entries.length > MODEL_FILES_MAX_ENTRIES,
    };
  }

  /** The names of `mmproj*.gguf`-like projector files beside `file` (bounded), sorted. */
  async projectorsBeside(file: string): Promise<string[]> {
    const out: string[] = [];
    let seen = 0;
    try {
      for await (const e of await opendir(dirname(file))) {
        if (++seen > MAX_NAMES_READ) break;
        if (e.name !== basename(file) && isGguf(e.name) && /mmproj/i.test(e.name))
          out.push(join(dirname(file), e.name));
      }
    } catch {
      return [];
    }
    return out.sort();
  }
}

function outsideRoots(path: string, param: string, roots: string[]): RouterError {
  const where = roots.length ? `: ${roots.join(', ')}` : ': none is set or exists';
  return new RouterError(
    403,
    'outside_model_folders',
    `${param}: '${printable(path)}' is outside the folders this node may read (${SETTINGS_KEYS}${where}); add its folder on the Settings screen (models.browse_dirs)`,
    'permission_error',
    param,
  );
}

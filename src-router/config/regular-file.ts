import { constants, type Stats } from 'node:fs';
import { type FileHandle, open, readlink } from 'node:fs/promises';

/** A path that is not a regular file when opened (a FIFO, a device, a socket, a folder). */
export class NotARegularFile extends Error {
  readonly code = 'not_a_file';
  constructor(
    readonly path: string,
    readonly kind: string,
  ) {
    super(`${path} is ${kind}, not a regular file`);
  }
}

export interface OpenedFile {
  handle: FileHandle;
  /** The open file's own stats (fstat): what is read is what was checked. */
  stats: Stats;
}

/**
 * Opens `path` for reading once and checks the open file, never the path again: a FIFO, a device or anything else
 * that is not a regular file is refused (and closed) without blocking, since it is opened with O_NONBLOCK; a FIFO
 * swapped in between a caller's check and this open is refused the same way. `noFollow`: a symlink as the last
 * component is refused too (ELOOP), for callers that open a path already resolved to its real path. Read through the
 * handle only; the caller closes it.
 */
export async function openRegularFile(path: string, opts: { noFollow?: boolean } = {}): Promise<OpenedFile> {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | (opts.noFollow ? constants.O_NOFOLLOW : 0);
  const handle = await open(path, flags);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new NotARegularFile(path, kindOf(stats));
    return { handle, stats };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Where an open file is now, from the kernel (Linux `/proc/self/fd`); null where that cannot be read. */
export async function openedPath(handle: FileHandle): Promise<string | null> {
  return readlink(`/proc/self/fd/${handle.fd}`).catch(() => null);
}

function kindOf(s: Stats): string {
  if (s.isFIFO()) return 'a FIFO';
  if (s.isDirectory()) return 'a folder';
  if (s.isCharacterDevice() || s.isBlockDevice()) return 'a device';
  if (s.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * Durable file writes: a crash leaves either the old or the new file whole. The one way the node rewrites a config
 * file (the Settings file, model configs).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `file` replaced by `content` through a fresh, fsynced, owner-only temp file in the same folder (PID and random
 * suffix, created exclusively), renamed over it. A rename replaces a link planted at the name instead of writing
 * through it. The folder is not fsynced here: `writeDurably` does, `fsyncDir` after several replacements.
 */
export function replaceFile(file: string, content: string | Buffer, mode = 0o600): void {
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
  const fd = openSync(tmp, 'wx', mode);
  try {
    try {
      writeFileSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already renamed or gone */
    }
    throw err;
  }
}

/** fsync of a folder, so a rename in it survives a crash (not every platform can open a folder: skipped there). */
export function fsyncDir(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    /* a folder that cannot be fsynced (Windows, some filesystems) */
  } finally {
    closeSync(fd);
  }
}

/** `file` replaced by `content` and its folder fsynced. */
export function writeDurably(file: string, content: string | Buffer, mode = 0o600): void {
  replaceFile(file, content, mode);
  fsyncDir(dirname(file));
}

/** `file` removed and its folder fsynced; false when it was not there. */
export function removeDurably(file: string): boolean {
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  fsyncDir(dirname(file));
  return true;
}

/**
 * One process per store folder (issue #9): `<store_dir>/router.lock`, created exclusively, holds the PID of the
 * process that uses the store. A lock whose PID is gone (a node killed outright) is stale and taken over; a live one
 * refuses the second opener with the folder and the PID in the message. The lock is removed at clean shutdown, and
 * on process exit as a last resort.
 */
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, realpathSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const STORE_LOCK_FILE = 'router.lock';

/** The store folder is held by another live process (or by this one, through another open). */
export class StoreLockedError extends Error {
  readonly code = 'store_locked';
  constructor(
    readonly storeDir: string,
    /** The PID in the lock file. */
    readonly pid: number,
    readonly lockFile: string,
  ) {
    super(
      pid === process.pid
        ? `store ${storeDir} is already open in this process (PID ${pid}, lock file ${lockFile}); one node per store`
        : `store ${storeDir} is in use by another routerdesk process (PID ${pid}, lock file ${lockFile}): stop that node first, or give this one its own cluster.store_dir`,
    );
    this.name = 'StoreLockedError';
  }
}

export interface StoreLock {
  /** The lock file (in the store folder's real path). */
  readonly file: string;
  readonly pid: number;
  /** Removes the lock file if it is still this lock's; idempotent. */
  release(): void;
}

/** Locks held by this process, by lock file path. */
const held = new Map<string, StoreLock>();
let exitHookInstalled = false;

/** True when a process with this PID exists (EPERM: it exists, owned by someone else). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The PID written in a lock file; null when it holds no positive integer (torn write, garbage); undefined when the file is gone. */
function readPid(file: string): number | null | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const pid = Number(text.split('\n')[0].trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

const unlinkQuietly = (file: string) => {
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
};

/**
 * Exclusive create of `file` holding our PID; false when it exists. The PID is written to a private temp file first
 * and hard-linked into place (link fails if the name exists), so no one ever reads a lock half-written; where hard
 * links are not supported, an exclusive open is used.
 */
function createExclusive(file: string): boolean {
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(temp, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
  try {
    linkSync(temp, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EXDEV') throw err;
  } finally {
    unlinkQuietly(temp);
  }
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, `${process.pid}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** A PID that holds nothing: gone, or this process's own PID left by an earlier process that had it (PID reuse), or unreadable. */
function stale(file: string, pid: number | null): boolean {
  if (pid === null) return true;
  if (pid === process.pid) return !held.has(file);
  return !pidAlive(pid);
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Takes `<storeDir>/router.lock` (creating the folder if needed) or throws `StoreLockedError` naming the folder and
 * the PID that holds it. A stale lock is removed under a short-lived `router.lock.takeover` guard (itself created
 * exclusively), so two processes taking over the same stale lock at once cannot both win.
 */
export function lockStore(storeDir: string): StoreLock {
  mkdirSync(storeDir, { recursive: true });
  const dir = realpathSync(storeDir);
  const file = join(dir, STORE_LOCK_FILE);
  const guard = `${file}.takeover`;
  if (held.has(file)) throw new StoreLockedError(dir, process.pid, file);
  for (let attempt = 0; attempt < 50; attempt++) {
    if (createExclusive(file)) return register(file);
    const pid = readPid(file);
    if (pid === undefined) continue; // released meanwhile: try again
    if (pid !== null && !stale(file, pid)) throw new StoreLockedError(dir, pid, file);
    // Stale: remove it, but only while holding the guard and only if it is still the same stale lock.
    if (!createExclusive(guard)) {
      const guardPid = readPid(guard);
      if (guardPid !== undefined && stale(guard, guardPid)) unlinkQuietly(guard); // a takeover that died half-way
      pause(10);
      continue;
    }
    try {
      if (readPid(file) === pid) unlinkQuietly(file);
    } finally {
      unlinkQuietly(guard);
    }
  }
  const pid = readPid(file);
  throw new StoreLockedError(dir, pid ?? 0, file);
}

function register(file: string): StoreLock {
  const lock: StoreLock = {
    file,
    pid: process.pid,
    release() {
      if (held.get(file) !== lock) return;
      held.delete(file);
      try {
        if (readPid(file) === process.pid) unlinkSync(file);
      } catch {
        // already gone, or the folder was removed: nothing to release
      }
    },
  };
  held.set(file, lock);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const l of [...held.values()]) l.release();
    });
  }
  return lock;
}

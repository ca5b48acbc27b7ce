/**
 * One process per store folder: `<store_dir>/router.lock`, created exclusively, holds the PID of the
 * process that uses the store (first line; its start time on Linux, second line). A lock whose process is gone (a
 * node killed outright), or whose PID now belongs to another process, is stale and taken over; a live one refuses
 * the second opener with the folder and the PID in the message. The lock is removed at clean shutdown, and
 * on process exit as a last resort.
 */
import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { readProcStat } from '../proc-stat';

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

/** A process's state letter and start time (clock ticks since boot); null off Linux or when gone. */
const procStat = (pid: number) => readProcStat(pid);

/**
 * When a process started, or null where that cannot be read (not Linux, gone). With it a lock survives PID reuse:
 * a live process with the lock's PID but another start time is not the one that wrote the lock.
 */
export function processStartTime(pid: number): string | null {
  return procStat(pid)?.startTime ?? null;
}

interface LockContent {
  /** null: no positive integer on the first line (torn write, garbage). */
  pid: number | null;
  startTime: string | null;
  text: string;
}

/** What a lock file holds (PID on the first line, the holder's start time on the second); undefined when it is gone. */
function readLock(file: string): LockContent | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const [first = '', second = ''] = text.split('\n');
  const pid = Number(first.trim());
  return { pid: Number.isSafeInteger(pid) && pid > 0 ? pid : null, startTime: second.trim() || null, text };
}

const lockText = () => `${process.pid}\n${processStartTime(process.pid) ?? ''}\n`;

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
  writeFileSync(temp, lockText(), { flag: 'wx', mode: 0o644 });
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
    writeSync(fd, lockText());
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * A lock that holds nothing: its PID is gone, or is alive with another start time (reused), or is this process's
 * own PID while this process does not hold it (left by an earlier process that had it), or the file is unreadable.
 */
function stale(file: string, lock: LockContent): boolean {
  if (lock.pid === null) return true;
  if (lock.pid === process.pid) return !held.has(file);
  if (!pidAlive(lock.pid)) return true;
  const proc = procStat(lock.pid);
  if (proc?.state === 'Z') return true; // exited, not yet reaped by its parent
  return proc !== null && lock.startTime !== null && proc.startTime !== lock.startTime;
}

/**
 * The PID of another live process that holds `<storeDir>/router.lock`, or null (no lock, a stale one, this process's
 * own). Only a look: the lock is taken by `lockStore`.
 */
export function storeLockHolder(storeDir: string): number | null {
  let file: string;
  try {
    file = join(realpathSync(storeDir), STORE_LOCK_FILE);
  } catch {
    return null; // no folder yet: nothing holds it
  }
  const lock = readLock(file);
  if (!lock || lock.pid === null || lock.pid === process.pid || stale(file, lock)) return null;
  return lock.pid;
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
    const lock = readLock(file);
    if (lock === undefined) continue; // released meanwhile: try again
    if (lock.pid !== null && !stale(file, lock)) throw new StoreLockedError(dir, lock.pid, file);
    // Stale: remove it, but only while holding the guard and only if it is still the same stale lock.
    if (!createExclusive(guard)) {
      const other = readLock(guard);
      if (other !== undefined && stale(guard, other)) unlinkQuietly(guard); // a takeover that died half-way
      pause(10);
      continue;
    }
    try {
      if (readLock(file)?.text === lock.text) unlinkQuietly(file);
    } finally {
      unlinkQuietly(guard);
    }
  }
  throw new Error(`store ${dir}: could not take the lock file ${file} (it keeps changing hands)`);
}

function register(file: string): StoreLock {
  const lock: StoreLock = {
    file,
    pid: process.pid,
    release() {
      if (held.get(file) !== lock) return;
      held.delete(file);
      try {
        if (readLock(file)?.pid === process.pid) unlinkSync(file);
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

/**
 * One build of an engine and key at a time across processes (two test files starting at once): a lock file created
 * exclusively, holding the builder's pid. A lock whose process is gone is stale and taken over; others wait, bounded.
 */
import { openSync, closeSync, readFileSync, rmSync, writeSync } from 'node:fs';

const POLL_MS = 1000;

function holderAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function tryTake(file: string): boolean {
  try {
    const fd = openSync(file, 'wx');
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return false;
  }
}

/** The pid in a lock file, or NaN when it cannot be read (being written, or removed meanwhile). */
function holderOf(file: string): number {
  try {
    return Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
  } catch {
    return Number.NaN;
  }
}

/**
 * Takes the lock `file`, waiting (at most `timeoutMs`) while a live process holds it; `onWait` is called once with
 * the holder's pid. Returns the release function.
 */
export async function takeBuildLock(file: string, timeoutMs: number, onWait?: (pid: number) => void): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  let told = false;
  let unreadable = 0;
  for (;;) {
    if (tryTake(file)) return () => rmSync(file, { force: true });
    const pid = holderOf(file);
    if (Number.isNaN(pid)) {
      // Just created and not yet written, or just removed: give the writer a moment before calling it stale.
      if (++unreadable > 3) rmSync(file, { force: true });
    } else if (!holderAlive(pid)) {
      rmSync(file, { force: true });
      continue;
    } else {
      unreadable = 0;
      if (!told) onWait?.(pid);
      told = true;
    }
    if (Date.now() > deadline) throw new Error(`gave up waiting for the build lock ${file} (held by pid ${pid}) after ${Math.round(timeoutMs / 60_000)} min`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/**
 * One build of an engine and key at a time across processes (two test files starting at once): a lock file created
 * exclusively, holding the builder's pid and the process's start time. A lock whose process is gone, or whose pid now
 * belongs to a process that started at another time (a killed build's pid reused), is stale and taken over; others
 * wait, bounded.
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

const POLL_MS = 1000;

/** When process `pid` started (clock ticks since boot, /proc/<pid>/stat field 22), or null where /proc cannot tell. */
function startTimeOf(pid: number): string | null {
  try {
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function holderAlive(pid: number, started: string | undefined): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = started ? startTimeOf(pid) : null;
  return now === null || now === started;
}

function tryTake(file: string): boolean {
  try {
    const fd = openSync(file, 'wx');
    writeSync(fd, `${process.pid} ${startTimeOf(process.pid) ?? ''}`.trimEnd() + '\n');
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return false;
  }
}

/** The pid and start time in a lock file; pid NaN when it cannot be read (being written, or removed meanwhile). */
function holderOf(file: string): { pid: number; started?: string } {
  try {
    const [pid, started] = readFileSync(file, 'utf8').trim().split(/\s+/);
    return { pid: Number.parseInt(pid ?? '', 10), started: started || undefined };
  } catch {
    return { pid: Number.NaN };
  }
}

/**
 * Takes the lock `file`, waiting (at most `timeoutMs`) while a live process holds it; `onWait` is called once with
 * the holder's pid. Returns the release function.
 */
export async function takeBuildLock(
  file: string,
  timeoutMs: number,
  onWait?: (pid: number) => void,
): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  let told = false;
  let unreadable = 0;
  for (;;) {
    if (tryTake(file)) return () => rmSync(file, { force: true });
    const { pid, started } = holderOf(file);
    if (Number.isNaN(pid)) {
      // Just created and not yet written, or just removed: give the writer a moment before calling it stale.
      if (++unreadable > 3) rmSync(file, { force: true });
    } else if (!holderAlive(pid, started)) {
      rmSync(file, { force: true });
      continue;
    } else {
      unreadable = 0;
      if (!told) onWait?.(pid);
      told = true;
    }
    if (Date.now() > deadline)
      throw new Error(
        `gave up waiting for the build lock ${file} (held by pid ${pid}) after ${Math.round(timeoutMs / 60_000)} min`,
      );
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

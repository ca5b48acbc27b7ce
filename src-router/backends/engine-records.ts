import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readProcStat } from '../proc-stat';

/**
 * The engines a node started, recorded in `<store_dir>/engines.json`, so that the next start of a node on
 * the same store can stop the ones a previous run left behind (an external engine outlives a `kill -9` of its node).
 * A record names the process by PID, command line and start time, and its owner (the node process) the same way:
 * a PID that was reused by an unrelated process, or an engine whose node still runs, is never touched.
 */

/** The record file's name in the store folder, next to router.db. */
export const ENGINE_RECORDS_FILE = 'engines.json';

/** What /proc tells about one live process (zombies count as gone). */
export interface ProcInfo {
  cmdline: string[];
  /** Clock ticks since boot (field 22 of /proc/<pid>/stat); with the PID it names one process for ever. */
  startTime: string | null;
  pgid: number | null;
}

export interface ProcessIdentity {
  pid: number;
  startTime: string | null;
}

export interface EngineRecord {
  pid: number;
  /** The engine's process group (its own: it is started as a group leader), or null where there are none. */
  pgid: number | null;
  cmdline: string[];
  startTime: string | null;
  localId: string;
  startedAt: string;
  owner: ProcessIdentity;
}

export interface EngineRecordFile {
  version: 1;
  engines: EngineRecord[];
}

/** `stop`: a leftover of a node that is gone; `gone`: nothing runs under that PID; `reused`: another process has the PID; `owned`: its node still runs. */
export type RecordVerdict = 'stop' | 'gone' | 'reused' | 'owned';

/**
 * Pure: what to do with one record, given what runs now under its PID (`engine`) and under its owner's PID
 * (`owner`), and who asks (`self`). Without a command line to compare (no /proc), a record is never acted on.
 */
export function judgeRecord(
  record: EngineRecord,
  engine: ProcInfo | null,
  owner: ProcInfo | null,
  self: ProcessIdentity,
): RecordVerdict {
  if (!engine) return 'gone';
  if (!sameCmdline(record.cmdline, engine.cmdline)) return 'reused';
  if (record.startTime !== null && engine.startTime !== null && record.startTime !== engine.startTime) return 'reused';
  const ownerIsSelf = record.owner.pid === self.pid && record.owner.startTime === self.startTime;
  if (!ownerIsSelf && owner && record.owner.startTime !== null && owner.startTime === record.owner.startTime)
    return 'owned';
  return 'stop';
}

function sameCmdline(a: string[], b: string[]): boolean {
  return a.length > 0 && a.length === b.length && a.every((w, i) => w === b[i]);
}

/** Pure: the words of /proc/<pid>/cmdline (NUL-separated, NUL-terminated). */
export function parseCmdline(raw: string): string[] {
  const words = raw.split('\0');
  if (words.length && words[words.length - 1] === '') words.pop();
  return words;
}

/** Pure: the file's records, or none when it is missing, unreadable or of another shape. */
export function parseRecordFile(text: string): EngineRecord[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return [];
  }
  const engines = (data as { engines?: unknown })?.engines;
  if (!Array.isArray(engines)) return [];
  return engines.filter(isRecord);
}

function isRecord(r: unknown): r is EngineRecord {
  const x = r as EngineRecord;
  return (
    typeof x === 'object' &&
    x !== null &&
    Number.isInteger(x.pid) &&
    x.pid > 1 &&
    (x.pgid === null || (Number.isInteger(x.pgid) && x.pgid > 1)) &&
    Array.isArray(x.cmdline) &&
    x.cmdline.every((w) => typeof w === 'string') &&
    (x.startTime === null || typeof x.startTime === 'string') &&
    typeof x.localId === 'string' &&
    typeof x.owner === 'object' &&
    x.owner !== null &&
    Number.isInteger(x.owner.pid) &&
    (x.owner.startTime === null || typeof x.owner.startTime === 'string')
  );
}

const LINUX = process.platform === 'linux';

/** The live process under `pid` (Linux); null when none, a zombie, or where there is no /proc. */
export function readProcInfo(pid: number): ProcInfo | null {
  if (!LINUX || !Number.isInteger(pid) || pid <= 0) return null;
  try {
    const stat = readProcStat(pid);
    if (!stat || stat.state === 'Z' || stat.state === 'X') return null;
    const cmdline = parseCmdline(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
    if (!cmdline.length) return null;
    return { cmdline, startTime: stat.startTime, pgid: stat.pgid };
  } catch {
    return null;
  }
}

/** This process, as records name their owner. */
export function selfIdentity(): ProcessIdentity {
  return { pid: process.pid, startTime: readProcInfo(process.pid)?.startTime ?? null };
}

/** Whether any live (not zombie) process is still in group `pgid`. */
export function groupAlive(pgid: number): boolean {
  // The kernel first (cheap): no member at all is the common answer once a group is stopped. Only a group the kernel
  // still sees is scanned, since its members may all be zombies nobody reaps.
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (LINUX) {
    try {
      for (const name of readdirSync('/proc')) {
        if (!/^\d+$/.test(name)) continue;
        try {
          const stat = readProcStat(Number(name));
          if (stat && stat.pgid === pgid && stat.state !== 'Z' && stat.state !== 'X') return true;
        } catch {
          /* gone meanwhile */
        }
      }
      return false;
    } catch {
      /* no /proc after all: ask the kernel */
    }
  }
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Sends `signal` to group `pgid`; false when there is no such group. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `gone()` holds, polling, for at most `ms`; resolves with whether it did. */
export async function waitUntil(gone: () => boolean, ms: number, everyMs = 50): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (gone()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}

export interface EngineRecordsLog {
  warn(msg: string): void;
}

/**
 * The record file of one store. Each change rewrites it atomically (temporary file, then rename). Records of
 * engines whose node still runs are kept as found.
 */
export class EngineRecords {
  private readonly own = new Map<number, EngineRecord>();
  private foreign: EngineRecord[] = [];
  readonly self = selfIdentity();

  constructor(
    readonly file: string,
    private readonly log: EngineRecordsLog = { warn: (m) => console.warn(m) },
  ) {}

  /** Records a just-spawned engine; its command line is read back from /proc (what a later start compares). */
  add(pid: number, localId: string, launched: string[], ownGroup: boolean): void {
    const info = readProcInfo(pid);
    this.own.set(pid, {
      pid,
      pgid: ownGroup ? pid : null,
      cmdline: info?.cmdline ?? launched,
      startTime: info?.startTime ?? null,
      localId,
      startedAt: new Date().toISOString(),
      owner: this.self,
    });
    this.write();
  }

  remove(pid: number): void {
    if (this.own.delete(pid)) this.write();
  }

  /**
   * Stops the engines a previous run on this store left behind: SIGTERM to each one's group, SIGKILL after
   * `graceMs`. Resolves when they are gone; never throws.
   */
  async reapLeftovers(graceMs = 5000): Promise<void> {
    let found: EngineRecord[];
    try {
      found = existsSync(this.file) ? parseRecordFile(readFileSync(this.file, 'utf8')) : [];
    } catch (err) {
      this.log.warn(`engine records ${this.file}: ${(err as Error).message}`);
      found = [];
    }
    const leftovers: EngineRecord[] = [];
    for (const r of found) {
      const verdict = judgeRecord(r, readProcInfo(r.pid), readProcInfo(r.owner.pid), this.self);
      if (verdict === 'stop') leftovers.push(r);
      else if (verdict === 'owned') this.foreign.push(r);
    }
    await Promise.all(leftovers.map((r) => this.stopLeftover(r, graceMs)));
    this.write();
  }

  private async stopLeftover(r: EngineRecord, graceMs: number) {
    this.log.warn(
      `stopping engine pid ${r.pid} (${r.localId}) left running by a previous run on this store: ${r.cmdline.join(' ')}`,
    );
    const group = r.pgid;
    const same = () => {
      const now = readProcInfo(r.pid);
      return now !== null && judgeRecord(r, now, null, this.self) === 'stop';
    };
    const gone = () => !same() && (group === null || !groupAlive(group));
    const send = (signal: NodeJS.Signals) => {
      // Checked again right before each signal: the PID may have been freed and reused while we waited.
      if (group !== null && (same() || groupAlive(group))) signalGroup(group, signal);
      else if (same()) {
        try {
          process.kill(r.pid, signal);
        } catch {
          /* gone */
        }
      }
    };
    send('SIGTERM');
    if (await waitUntil(gone, graceMs)) return;
    send('SIGKILL');
    if (!(await waitUntil(gone, graceMs))) this.log.warn(`engine pid ${r.pid} (${r.localId}) did not stop`);
  }

  private write(): void {
    const data: EngineRecordFile = { version: 1, engines: [...this.foreign, ...this.own.values()] };
    const tmp = join(dirname(this.file), `.${basename(this.file)}.${process.pid}.tmp`);
    try {
      if (!data.engines.length) {
        rmSync(this.file, { force: true });
        return;
      }
      writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`);
      renameSync(tmp, this.file);
    } catch (err) {
      this.log.warn(`cannot write engine records ${this.file}: ${(err as Error).message}`);
    }
  }
}

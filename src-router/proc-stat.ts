import { readFileSync } from 'node:fs';

/** What the router reads of a process in `/proc/<pid>/stat` (Linux). */
export interface ProcStat {
  state: string;
  pgid: number;
  /** Clock ticks since boot (field 22); with the PID it names one process for ever. */
  startTime: string;
  /** CPU time spent in user and kernel mode, in clock ticks (fields 14 and 15; 100 per second on Linux). */
  utime: number;
  stime: number;
}

/** Pure: the fields of /proc/<pid>/stat's text (the command name may hold spaces and parentheses). */
export function parseProcStat(text: string): ProcStat | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  // Fields after the name: state (3), ppid (4), pgrp (5), … utime (14), stime (15), … starttime (22).
  const f = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  if (f.length < 20) return null;
  const pgid = Number(f[2]);
  if (!Number.isInteger(pgid)) return null;
  return { state: f[0], pgid, startTime: f[19], utime: Number(f[11]), stime: Number(f[12]) };
}

/** The stat of a live process; null off Linux or when it is gone. */
export function readProcStat(pid: number): ProcStat | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

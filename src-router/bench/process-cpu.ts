/** A process's CPU time, as the benchmarks count the router's: user + system clock ticks from `/proc/<pid>/stat`. */
import { readProcStat } from '../proc-stat';

/** Linux clock ticks per second (CLK_TCK): /proc's CPU times are in these. */
export const TICKS_PER_S = 100;

/** User + system ticks of `pid` so far; 0 without a pid or a readable stat. */
export function cpuTicks(pid: number | undefined): number {
  const s = pid === undefined ? null : readProcStat(pid);
  return s ? s.utime + s.stime : 0;
}

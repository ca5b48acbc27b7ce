import { readFile } from 'node:fs/promises';
import os from 'node:os';
import type { CpuStats, MemoryStats } from './blob';
import { compact, inRange } from './compact';

export interface Meminfo {
  /** All in bytes; absent when the line is missing. */
  total?: number;
  available?: number;
  pageCache?: number;
  swapUsed?: number;
}

/** Parses /proc/meminfo (`Key:   123 kB` lines) into bytes: MemTotal, MemAvailable, Cached, SwapTotal − SwapFree. */
export function parseMeminfo(text: string): Meminfo {
  const kb = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z0-9_()]+):\s+(\d+)(?:\s+kB)?\s*$/.exec(line.trim());
    if (m) kb.set(m[1], Number(m[2]) * 1024);
  }
  const swapTotal = kb.get('SwapTotal');
  const swapFree = kb.get('SwapFree');
  return (
    compact<Meminfo>({
      total: kb.get('MemTotal'),
      available: kb.get('MemAvailable'),
      pageCache: kb.get('Cached'),
      swapUsed: swapTotal !== undefined && swapFree !== undefined ? Math.max(0, swapTotal - swapFree) : undefined,
    }) ?? {}
  );
}

export interface CpuTimes {
  /** Summed over cores, ms. */
  idle: number;
  total: number;
}

/** Sums os.cpus() times over every core. */
export function cpuTimes(
  cpus: readonly { times: { user: number; nice: number; sys: number; idle: number; irq: number } }[],
): CpuTimes {
  let idle = 0;
  let total = 0;
  for (const { times: t } of cpus) {
    idle += t.idle;
    total += t.user + t.nice + t.sys + t.idle + t.irq;
  }
  return { idle, total };
}

/** Busy percent (0.1 precision) between two samples; undefined without a previous sample or with too little time between them. */
export function cpuBusyPercent(prev: CpuTimes | undefined, cur: CpuTimes, minTotalMs = 200): number | undefined {
  if (!prev) return undefined;
  const total = cur.total - prev.total;
  if (total < minTotalMs) return undefined;
  const busy = total - (cur.idle - prev.idle);
  return Math.round(Math.min(100, Math.max(0, (busy / total) * 100)) * 10) / 10;
}

export interface HostInputs {
  hostname: string;
  platform: NodeJS.Platform;
  cpus: readonly { model: string; times: { user: number; nice: number; sys: number; idle: number; irq: number } }[];
  loadavg: readonly number[];
  totalmem: number;
  freemem: number;
  /** /proc/meminfo text, when there is one (Linux). */
  meminfo?: string;
}

export interface HostStats {
  host?: string;
  cpu?: CpuStats;
  memory?: MemoryStats;
}

/**
 * Host part of the blob from raw inputs. `prevTimes` is the CPU sample of the previous publish (load is the busy
 * share since then). Windows reports loadavg as zeros, which are not measurements: absent there.
 */
export function hostStats(inputs: HostInputs, prevTimes?: CpuTimes): HostStats {
  const mem = inputs.meminfo ? parseMeminfo(inputs.meminfo) : {};
  const total = mem.total ?? inRange(inputs.totalmem, 1);
  const available = mem.available ?? (mem.total === undefined ? inRange(inputs.freemem, 0) : undefined);
  const model = inputs.cpus[0]?.model.trim();
  return (
    compact<HostStats>({
      host: inputs.hostname || undefined,
      cpu: compact<CpuStats>({
        model: model || undefined,
        cores: inputs.cpus.length || undefined,
        load: cpuBusyPercent(prevTimes, cpuTimes(inputs.cpus)),
        loadavg: inputs.platform === 'win32' ? undefined : inRange(inputs.loadavg[0], 0),
      }),
      memory: compact<MemoryStats>({
        total,
        used: total !== undefined && available !== undefined ? Math.max(0, total - available) : undefined,
        pageCache: mem.pageCache,
        swap: mem.swapUsed,
      }),
    }) ?? {}
  );
}

/** Reads the host through `os` and /proc/meminfo, remembering the CPU sample so each call's load covers the gap. */
export class HostSampler {
  private prev?: CpuTimes;

  constructor(private readonly meminfoPath = '/proc/meminfo') {
    this.prev = cpuTimes(os.cpus());
  }

  async sample(): Promise<HostStats> {
    const meminfo = await readFile(this.meminfoPath, 'utf8').catch(() => undefined);
    const inputs: HostInputs = {
      hostname: os.hostname(),
      platform: process.platform,
      cpus: os.cpus(),
      loadavg: os.loadavg(),
      totalmem: os.totalmem(),
      freemem: os.freemem(),
      meminfo,
    };
    const stats = hostStats(inputs, this.prev);
    // Too short a gap gives no load; keep the older sample so the next call covers a longer one.
    if (stats.cpu?.load !== undefined) this.prev = cpuTimes(inputs.cpus);
    return stats;
  }
}

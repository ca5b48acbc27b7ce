import { execFile } from 'node:child_process';
import { engineEnv } from '../backends/engine-env';
import type { GpuStats } from './blob';
import { compact, inRange } from './compact';

/** Arguments for `nvidia-smi`: one CSV line per device, no header, no units (MiB, %, °C, W). */
export const NVIDIA_SMI_ARGS = [
  '--query-gpu=name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw,power.limit',
  '--format=csv,noheader,nounits',
];

const MIB = 1024 * 1024;

/** A CSV cell as a number; "[N/A]", "[Not Supported]", "N/A" and empty cells are absent. */
function num(cell: string | undefined): number | undefined {
  const s = cell?.trim() ?? '';
  if (!s || s.startsWith('[') || /^n\/?a$/i.test(s)) return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

function text(cell: string | undefined): string | undefined {
  const s = cell?.trim() ?? '';
  return !s || s.startsWith('[') || /^n\/?a$/i.test(s) ? undefined : s;
}

/**
 * Parses `nvidia-smi` output (NVIDIA_SMI_ARGS) into one reading per device, in bytes, percent, °C and watts.
 * Unreadable or out-of-range cells are absent. A name containing commas is rejoined (the six numeric columns are
 * always the last six). Lines with too few columns are skipped.
 */
export function parseNvidiaSmi(output: string): GpuStats[] {
  const devices: GpuStats[] = [];
  for (const line of output.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const cells = line.split(',');
    if (cells.length < 7) continue;
    const [util, used, total, temp, power, cap] = cells.slice(-6).map(num);
    const reading = compact<GpuStats>({
      name: text(cells.slice(0, -6).join(',')),
      utilization: inRange(util, 0, 100),
      vramUsed: inRange(used, 0) === undefined ? undefined : used! * MIB,
      vramTotal: inRange(total, 0) === undefined ? undefined : total! * MIB,
      temperature: inRange(temp, -50, 200),
      power: inRange(power, 0),
      powerCap: inRange(cap, 0),
    });
    if (reading) devices.push(reading);
  }
  return devices;
}

const sum = (xs: (number | undefined)[]) =>
  xs.length && xs.every((x) => x !== undefined) ? xs.reduce<number>((a, b) => a + b!, 0) : undefined;
const present = (xs: (number | undefined)[]) => xs.filter((x): x is number => x !== undefined);

/**
 * One blob `gpu` object for the host. One device: itself. Several: "N × name" (or the distinct names joined),
 * mean utilisation, summed VRAM and power (only when every device reports them), the hottest temperature.
 */
export function combineGpus(devices: GpuStats[]): GpuStats | undefined {
  if (devices.length <= 1) return devices[0];
  const names = devices.map((d) => d.name).filter((n): n is string => !!n);
  const distinct = [...new Set(names)];
  const utils = present(devices.map((d) => d.utilization));
  const temps = present(devices.map((d) => d.temperature));
  return compact<GpuStats>({
    name:
      distinct.length === 1 && names.length === devices.length
        ? `${devices.length} × ${distinct[0]}`
        : distinct.join(', ') || undefined,
    utilization: utils.length ? utils.reduce((a, b) => a + b, 0) / utils.length : undefined,
    vramUsed: sum(devices.map((d) => d.vramUsed)),
    vramTotal: sum(devices.map((d) => d.vramTotal)),
    temperature: temps.length ? Math.max(...temps) : undefined,
    power: sum(devices.map((d) => d.power)),
    powerCap: sum(devices.map((d) => d.powerCap)),
  });
}

export interface NvidiaSmiOptions {
  /** Binary name or path (default `nvidia-smi` from PATH). */
  binary?: string;
  timeoutMs?: number;
}

/** Runs nvidia-smi once; undefined when it is missing, fails, times out or reports no device (no GPU → no `gpu`). */
export function readNvidiaGpu(opts: NvidiaSmiOptions = {}): Promise<GpuStats | undefined> {
  return new Promise((resolve) => {
    execFile(
      opts.binary ?? 'nvidia-smi',
      NVIDIA_SMI_ARGS,
      { timeout: opts.timeoutMs ?? 5000, windowsHide: true, env: engineEnv(process.env) },
      (err, stdout) => {
        resolve(err ? undefined : combineGpus(parseNvidiaSmi(stdout)));
      },
    );
  });
}

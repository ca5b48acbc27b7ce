import { describe, expect, it } from 'vitest';
import {
  combineGpus,
  cpuBusyPercent,
  cpuTimes,
  type HostInputs,
  hostStats,
  parseMeminfo,
  parseNvidiaSmi,
  runtimeBlobSchema,
} from '../../src-router/runtime';

const MIB = 1024 * 1024;

describe('nvidia-smi parser', () => {
  it('reads one device into bytes, percent, °C and watts', () => {
    const [gpu] = parseNvidiaSmi('NVIDIA GeForce RTX 4090, 37, 18234, 24564, 61, 287.45, 450.00\n');
    expect(gpu).toEqual({
      name: 'NVIDIA GeForce RTX 4090',
      utilization: 37,
      vramUsed: 18234 * MIB,
      vramTotal: 24564 * MIB,
      temperature: 61,
      power: 287.45,
      powerCap: 450,
    });
    expect(runtimeBlobSchema.shape.gpu.parse(gpu)).toEqual(gpu);
  });

  it('leaves [N/A] and [Not Supported] fields absent, not zero', () => {
    const [gpu] = parseNvidiaSmi('Tesla T4, [N/A], 0, 15360, 44, [Not Supported], [N/A]');
    expect(gpu).toEqual({ name: 'Tesla T4', vramUsed: 0, vramTotal: 15360 * MIB, temperature: 44 });
    expect('utilization' in gpu).toBe(false);
    expect('power' in gpu).toBe(false);
    expect('powerCap' in gpu).toBe(false);
  });

  it('drops out-of-range and garbage cells, rejoins names with commas, skips short and empty lines', () => {
    const out = parseNvidiaSmi('Odd, Name Inc, 140, -1, abc, 45, 30, 70\n\nbroken, 1, 2\r\n');
    expect(out).toEqual([{ name: 'Odd, Name Inc', temperature: 45, power: 30, powerCap: 70 }]);
    expect(parseNvidiaSmi('')).toEqual([]);
  });

  it('combines several devices: same name counted, VRAM and power summed, mean utilisation, hottest temperature', () => {
    const devs = parseNvidiaSmi('A100, 10, 1000, 40000, 50, 100, 400\nA100, 30, 3000, 40000, 70, 200, 400\n');
    expect(combineGpus(devs)).toEqual({
      name: '2 × A100',
      utilization: 20,
      vramUsed: 4000 * MIB,
      vramTotal: 80000 * MIB,
      temperature: 70,
      power: 300,
      powerCap: 800,
    });
  });

  it('a sum is absent when any device lacks the value; different names are joined', () => {
    const devs = parseNvidiaSmi('A, 10, 1000, 2000, 50, [N/A], 400\nB, [N/A], 1000, 2000, 60, 100, 400\n');
    expect(combineGpus(devs)).toEqual({
      name: 'A, B',
      utilization: 10,
      vramUsed: 2000 * MIB,
      vramTotal: 4000 * MIB,
      temperature: 60,
      powerCap: 800,
    });
    expect(combineGpus([])).toBeUndefined();
  });
});

const MEMINFO = `MemTotal:       16318480 kB
MemFree:         1023456 kB
MemAvailable:    9000000 kB
Buffers:          204800 kB
Cached:          6553600 kB
SwapCached:            0 kB
SwapTotal:       2097148 kB
SwapFree:        1048574 kB
HugePages_Total:       0
`;

describe('/proc/meminfo parser', () => {
  it('reads total, available, page cache (Cached) and swap used, in bytes', () => {
    expect(parseMeminfo(MEMINFO)).toEqual({
      total: 16318480 * 1024,
      available: 9000000 * 1024,
      pageCache: 6553600 * 1024,
      swapUsed: 1048574 * 1024,
    });
  });

  it('missing lines stay absent', () => {
    expect(parseMeminfo('MemTotal: 1000 kB\n')).toEqual({ total: 1024000 });
    expect(parseMeminfo('')).toEqual({});
  });
});

const cpu = (busy: number, idle: number) => ({
  model: ' Ryzen 9 ',
  times: { user: busy, nice: 0, sys: 0, idle, irq: 0 },
});

describe('host stats', () => {
  const inputs: HostInputs = {
    hostname: 'box',
    platform: 'linux',
    cpus: [cpu(1000, 9000), cpu(3000, 7000)],
    loadavg: [1.5, 1, 0.5],
    totalmem: 999,
    freemem: 1,
    meminfo: MEMINFO,
  };

  it('cpu busy percent comes from the difference of two samples; too small a gap gives none', () => {
    const prev = { idle: 10_000, total: 20_000 };
    expect(cpuBusyPercent(prev, { idle: 10_750, total: 21_000 })).toBe(25);
    expect(cpuBusyPercent(prev, { idle: 10_010, total: 20_050 })).toBeUndefined();
    expect(cpuBusyPercent(undefined, prev)).toBeUndefined();
    expect(cpuTimes(inputs.cpus)).toEqual({ idle: 16_000, total: 20_000 });
  });

  it('builds host, cpu and memory, preferring /proc/meminfo (used = total − available)', () => {
    const stats = hostStats(inputs, { idle: 15_000, total: 18_000 });
    expect(stats).toEqual({
      host: 'box',
      cpu: { model: 'Ryzen 9', cores: 2, load: 50, loadavg: 1.5 },
      memory: {
        total: 16318480 * 1024,
        used: (16318480 - 9000000) * 1024,
        pageCache: 6553600 * 1024,
        swap: 1048574 * 1024,
      },
    });
  });

  it('without meminfo uses os totals, and leaves page cache, swap and the first load absent', () => {
    const stats = hostStats({ ...inputs, meminfo: undefined });
    expect(stats.memory).toEqual({ total: 999, used: 998 });
    expect(stats.cpu).toEqual({ model: 'Ryzen 9', cores: 2, loadavg: 1.5 });
  });

  it('Windows loadavg zeros and an empty cpu list are not published', () => {
    const stats = hostStats({ ...inputs, platform: 'win32', cpus: [], meminfo: undefined });
    expect(stats.cpu).toBeUndefined();
  });
});

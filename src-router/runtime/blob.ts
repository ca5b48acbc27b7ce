import { z } from 'zod';

/**
 * The runtime blob (RT-1..6): what a node publishes about its host and engine at `RUNTIME_BLOB_KEY`, and the only
 * thing `runtime.health` reads. Every field is optional: a field the publisher could not measure is absent, never
 * a substituted zero (RT-2). Unknown keys are dropped on read, so a newer publisher does not break an older console.
 * Only zod is imported here, so this file can move to `contract/` unchanged when the renderer needs it.
 *
 * Units: bytes for memory sizes, milliseconds for durations, percent 0–100 for utilisation and load,
 * °C for temperature, watts for power, tokens for context lengths.
 */

export const RUNTIME_BLOB_KEY = 'clutchcall:inference:runtime';

const bytes = (what: string) => z.number().nonnegative().describe(`${what}, in bytes`);
const percent = (what: string) => z.number().min(0).max(100).describe(`${what}, percent 0–100`);
const count = (what: string) => z.number().int().nonnegative().describe(what);

export const gpuStatsSchema = z
  .object({
    name: z.string().optional().describe('GPU device name (several devices: "2 × NAME" or the names joined with ", ")'),
    utilization: percent('compute utilisation (mean over devices)').optional(),
    vramUsed: bytes('VRAM in use (sum over devices)').optional(),
    vramTotal: bytes('VRAM total (sum over devices)').optional(),
    temperature: z.number().describe('hottest device temperature, °C').optional(),
    power: z.number().nonnegative().describe('power draw, watts (sum over devices)').optional(),
    powerCap: z.number().nonnegative().describe('power limit, watts (sum over devices)').optional(),
  })
  .describe('GPU gauges; absent when no GPU could be read (no nvidia-smi)');

export const cpuStatsSchema = z
  .object({
    model: z.string().optional().describe('CPU model string'),
    cores: count('logical cores').optional(),
    load: percent('CPU busy time over the last publish interval, all cores').optional(),
    loadavg: z.number().nonnegative().describe('1-minute load average (runnable tasks, not a percent)').optional(),
    tensorParallel: count('tensor-parallel width of the loaded model (same as servingConfig.tensorParallel)').optional(),
    maxContext: count('maximum context length of the loaded model, tokens (same as servingConfig.maxModelLen)').optional(),
  })
  .describe('CPU gauges');

export const memoryStatsSchema = z
  .object({
    total: bytes('host RAM total').optional(),
    used: bytes('host RAM in use (total − available)').optional(),
    mappedModels: count('number of models loaded (memory-mapped) by the engines').optional(),
    pageCache: bytes('page cache (/proc/meminfo Cached)').optional(),
    swap: bytes('swap in use (SwapTotal − SwapFree)').optional(),
  })
  .describe('host memory gauges');

export const selfTestResultSchema = z
  .object({
    name: z.string().describe('diagnostic name, as the publisher names it'),
    detail: z.string().describe('one-line result: which device, path or endpoint'),
    ms: z.number().nonnegative().describe('time the check took, milliseconds'),
    status: z.string().describe('"pass", "warn", anything else is a failure (this router publishes "fail")'),
  })
  .describe('one boot diagnostic');

export const servingConfigSchema = z
  .object({
    servedModel: z.string().optional().describe('model name clients use in requests'),
    tensorParallel: count('GPUs holding shards of the weights in one runtime instance').optional(),
    gpuMemUtil: z.number().min(0).max(1).describe('fraction 0–1 of GPU memory the server may pre-allocate').optional(),
    maxModelLen: count('maximum context length, tokens').optional(),
    dtype: z.string().optional().describe('weight and activation datatype loaded'),
  })
  .describe('serving config of the loaded model');

export const runtimeBlobSchema = z
  .object({
    host: z.string().optional().describe('hostname of the machine running the node'),
    version: z.string().optional().describe('version string of the publisher'),
    uptime: z.number().nonnegative().optional().describe('process uptime, milliseconds'),
    engine: z.string().optional().describe('engine the runtime names itself as'),
    gpu: gpuStatsSchema.optional(),
    cpu: cpuStatsSchema.optional(),
    memory: memoryStatsSchema.optional(),
    selfTests: z.array(selfTestResultSchema).optional().describe('boot diagnostics, in the order they ran'),
    servingConfig: servingConfigSchema.optional(),
  })
  .describe('runtime blob published at clutchcall:inference:runtime');

export type GpuStats = z.infer<typeof gpuStatsSchema>;
export type CpuStats = z.infer<typeof cpuStatsSchema>;
export type MemoryStats = z.infer<typeof memoryStatsSchema>;
export type SelfTestResult = z.infer<typeof selfTestResultSchema>;
export type ServingConfig = z.infer<typeof servingConfigSchema>;
export type RuntimeBlob = z.infer<typeof runtimeBlobSchema>;

/** What `runtime.health` answers: the blob, or that nothing (valid) is published and why. */
export const runtimeHealthSchema = z.discriminatedUnion('published', [
  z.object({ published: z.literal(false), reason: z.string().optional().describe('absent when simply nothing is published') }),
  z.object({ published: z.literal(true), blob: runtimeBlobSchema }),
]);
export type RuntimeHealth = z.infer<typeof runtimeHealthSchema>;

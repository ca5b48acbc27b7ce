/**
 * The runtime blob (RT-1..6). The schema lives in `contract/runtime.ts` (zod only) because the renderer validates
 * `runtime.health` with it; this module re-exports the blob part for the runtime code.
 */
export {
  RUNTIME_BLOB_KEY, cpuStatsSchema, gpuStatsSchema, memoryStatsSchema, runtimeBlobReadSchema, runtimeBlobSchema, runtimeHealthSchema, selfTestEntrySchema, selfTestResultSchema, servingConfigSchema,
  type CpuStats, type GpuStats, type MemoryStats, type RuntimeBlob, type RuntimeBlobView, type RuntimeHealth, type SelfTestEntry, type SelfTestResult, type ServingConfig,
} from '../contract/runtime';

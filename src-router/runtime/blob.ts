/**
 * The runtime blob (RT-1..6). The schema lives in `contract/runtime.ts` (zod only) because the renderer validates
 * `runtime.health` with it; this module re-exports the blob part for the runtime code.
 */
export {
  type CpuStats,
  cpuStatsSchema,
  type GpuStats,
  gpuStatsSchema,
  type MemoryStats,
  memoryStatsSchema,
  RUNTIME_BLOB_KEY,
  type RuntimeBlob,
  type RuntimeBlobView,
  type RuntimeHealth,
  runtimeBlobReadSchema,
  runtimeBlobSchema,
  runtimeHealthSchema,
  type SelfTestEntry,
  type SelfTestResult,
  type ServingConfig,
  selfTestEntrySchema,
  selfTestResultSchema,
  servingConfigSchema,
} from '../contract/runtime';

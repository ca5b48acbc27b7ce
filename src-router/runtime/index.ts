export * from './blob';
export { compact, inRange } from './compact';
export { combineGpus, NVIDIA_SMI_ARGS, type NvidiaSmiOptions, parseNvidiaSmi, readNvidiaGpu } from './gpu';
export {
  type CpuTimes,
  cpuBusyPercent,
  cpuTimes,
  type HostInputs,
  HostSampler,
  type HostStats,
  hostStats,
  type Meminfo,
  parseMeminfo,
} from './host';
export { type BlobParts, buildRuntimeBlob, RuntimePublisher, type RuntimePublisherOptions } from './publisher';
export { readRuntimeHealth } from './read-health';
export {
  engineBinaryCheck,
  formatBytes,
  freeSpaceCheck,
  keyspaceReachableCheck,
  portBoundCheck,
  resolveExecutable,
  storeWritableCheck,
} from './self-test-checks';
export {
  oneLine,
  type RunSelfTestsOptions,
  runSelfTests,
  type SelfTestCheck,
  type SelfTestOutcome,
  type SelfTestRun,
  type SelfTestStatus,
} from './self-tests';

export * from './blob';
export { compact, inRange } from './compact';
export { combineGpus, NVIDIA_SMI_ARGS, parseNvidiaSmi, readNvidiaGpu, type NvidiaSmiOptions } from './gpu';
export { cpuBusyPercent, cpuTimes, HostSampler, hostStats, parseMeminfo, type CpuTimes, type HostInputs, type HostStats, type Meminfo } from './host';
export { buildRuntimeBlob, RuntimePublisher, type BlobParts, type RuntimePublisherOptions } from './publisher';
export { readRuntimeHealth } from './read-health';
export { engineBinaryCheck, formatBytes, freeSpaceCheck, keyspaceReachableCheck, portBoundCheck, resolveExecutable, storeWritableCheck } from './self-test-checks';
export { oneLine, runSelfTests, type RunSelfTestsOptions, type SelfTestCheck, type SelfTestOutcome, type SelfTestRun, type SelfTestStatus } from './self-tests';

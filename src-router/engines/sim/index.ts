export { IMAGE_NOT_SUPPORTED_MESSAGE, imageRefusalBody, LOADING_BODY } from './errors';
export type { SimEngineIo } from './main';
export { SimEngineExit, simEngineMain } from './main';
export type { SimStats } from './metrics';
export { ENGINE_METRIC_NAMES, SIM_METRIC_NAMES } from './metrics';
export type { SimEngineOptions, SimEngineOptionsInput, SimFailMode, SimShape } from './options';
export {
  parseSimEngineArgv,
  resolveSimEngineOptions,
  SIM_ENGINE_USAGE,
  SIM_SHAPES,
  SimOptionsError,
  simEngineArgv,
  simEngineOptionsSchema,
} from './options';
export { encodePng } from './png';
export { KOBOLD_VERSION } from './routes-kobold';
export { LLAMA_SERVER_BUILD, simProps, simSlots } from './routes-llama-server';
export type { SeenEntry, SeenState } from './seen';
export { SEEN_CAPACITY, SEEN_HEAD_CHARS, SeenRing } from './seen';
export type { SimEngineHandle, SimEngineHooks } from './server';
export { SLOW_HEALTH_FACTOR, startSimEngine } from './server';
export { KV_PAGE_TOKENS, QUEUE_WAIT_BUCKETS } from './state';
export { audioSeconds, encodeWav, wavDurationSeconds } from './wav';

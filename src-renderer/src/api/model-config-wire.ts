/** The console's names for the model-configs and engine discovery answers (the router's contract). */

export const MODEL_CONFIGS_PATH = '/router/v1/console/model-configs';
export const ENGINES_PATH = '/router/v1/console/engines';

export type {
  ModelConfigEntry,
  ModelConfigList,
  ModelConfigRemoved,
  ModelConfigWritten,
} from '../../../src-router/contract';
export {
  modelConfigEntrySchema,
  modelConfigListSchema,
  modelConfigRemovedSchema,
  modelConfigWrittenSchema,
} from '../../../src-router/contract';

/** The local ID a config file gives its model: the file name without `.yaml` / `.yml` (the API's `:name`). */
export const configStem = (file: string) => (file.split(/[\\/]/).pop() ?? '').replace(/\.ya?ml$/i, '');

export type { EngineInfo as EngineView, EnginesAnswer as EngineList } from '../../../src-router/contract';
export { enginesAnswerSchema as engineListSchema } from '../../../src-router/contract';

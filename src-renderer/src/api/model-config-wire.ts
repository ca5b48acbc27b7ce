import { z } from 'zod';

/**
 * The model-configs answers (the router's contract) and engine discovery as the console reads it:
 * `GET /router/v1/console/engines` (which engine binaries this node can run), loose where the node may add fields.
 */

export const MODEL_CONFIGS_PATH = '/router/v1/console/model-configs';
export const ENGINES_PATH = '/router/v1/console/engines';

export { modelConfigEntrySchema, modelConfigListSchema, modelConfigWrittenSchema, modelConfigRemovedSchema } from '../../../src-router/contract';
export type { ModelConfigEntry, ModelConfigList, ModelConfigWritten, ModelConfigRemoved } from '../../../src-router/contract';

/** The local ID a config file gives its model: the file name without `.yaml` / `.yml` (the API's `:name`). */
export const configStem = (file: string) => (file.split(/[\\/]/).pop() ?? '').replace(/\.ya?ml$/i, '');

export const engineViewSchema = z.object({
  family: z.string(),
  binary: z.string().nullable().optional(),
  available: z.boolean(),
  path: z.string().nullable().optional(),
  version: z.string().nullable().optional(),
  found_in: z.string().nullable().optional(),
  reason: z.string().nullable().optional(),
  how_to_get: z.string().nullable().optional(),
}).passthrough();
export type EngineView = z.infer<typeof engineViewSchema>;

export const engineListSchema = z.object({ engines: z.array(engineViewSchema) }).passthrough();
export type EngineList = z.infer<typeof engineListSchema>;

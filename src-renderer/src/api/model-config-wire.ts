import { z } from 'zod';

/**
 * The model-configs and engine discovery answers as the console reads them: `GET /router/v1/console/model-configs`
 * (this node's models folder, each file's config or its error, and what is in force) and
 * `GET /router/v1/console/engines` (which engine binaries this node can run). Loose where the node may add fields.
 */

export const MODEL_CONFIGS_PATH = '/router/v1/console/model-configs';
export const ENGINES_PATH = '/router/v1/console/engines';

export const modelConfigEntrySchema = z.object({
  name: z.string(),
  file: z.string(),
  config: z.record(z.string(), z.unknown()).nullable(),
  error: z.object({ path: z.string().nullable().optional(), message: z.string() }).passthrough().nullable(),
  in_force: z.record(z.string(), z.unknown()).nullable().optional(),
}).passthrough();
export type ModelConfigEntry = z.infer<typeof modelConfigEntrySchema>;

export const modelConfigListSchema = z.object({ config_dir: z.string(), configs: z.array(modelConfigEntrySchema) }).passthrough();
export type ModelConfigList = z.infer<typeof modelConfigListSchema>;

export const modelConfigWrittenSchema = z.object({ name: z.string(), file: z.string(), config: z.record(z.string(), z.unknown()) }).passthrough();
export type ModelConfigWritten = z.infer<typeof modelConfigWrittenSchema>;

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

import { z } from 'zod';

/**
 * Wire objects of the models folder's console API (`/router/v1/console/model-configs`): list the model configs of this
 * node's `models.config_dir`, create, replace and remove one. A config travels as the file's own shape (its input
 * form, as written: durations as text, relative weights paths); the node validates it with the model-config schema
 * start-up uses. A refused body is the console's usual error, 400
 * `{ error: { message: "config.<path>: …", type: "invalid_request_error", param: "config.<path>", code } }` with
 * `code` `invalid_config` (schema), `model_not_readable` (weights file) or `invalid_request` (body shape); a name or
 * file already taken is 409 `model_config_exists`, an unknown `:name` 404 `model_config_not_found`.
 */

/** A config as JSON: the YAML file's mapping. */
const configObject = z.record(z.string(), z.unknown());

/** Why a file is not in force as written: the field path (`contextsize`, `sim.load_time`), or `(yaml)` / `(file)`. */
export const modelConfigErrorSchema = z.object({ path: z.string(), message: z.string() }).strict();
export type ModelConfigErrorWire = z.infer<typeof modelConfigErrorSchema>;

export const modelConfigEntrySchema = z
  .object({
    name: z.string().describe("the config's name field, or the file stem when the file does not parse"),
    file: z.string().describe('absolute path of the file'),
    config: configObject.nullable().describe('the file as written, as JSON; null when it is no YAML mapping'),
    error: modelConfigErrorSchema.nullable(),
    in_force: configObject
      .nullable()
      .describe(
        'the config the node runs for this file (parsed form): the last good one while the file is invalid; null when none',
      ),
  })
  .strict();
export type ModelConfigEntry = z.infer<typeof modelConfigEntrySchema>;

export const modelConfigListSchema = z
  .object({ config_dir: z.string(), configs: z.array(modelConfigEntrySchema) })
  .strict();
export type ModelConfigList = z.infer<typeof modelConfigListSchema>;

/** Body of POST and PUT. */
export const modelConfigWriteSchema = z.object({ config: configObject }).strict();
export type ModelConfigWrite = z.infer<typeof modelConfigWriteSchema>;

/** Answer of POST (201) and PUT (200): the config as written. */
export const modelConfigWrittenSchema = z.object({ name: z.string(), file: z.string(), config: configObject }).strict();
export type ModelConfigWritten = z.infer<typeof modelConfigWrittenSchema>;

/** Answer of DELETE, once the model's running requests finished and its engine stopped. */
export const modelConfigRemovedSchema = z.object({ name: z.string(), removed: z.literal(true) }).strict();
export type ModelConfigRemoved = z.infer<typeof modelConfigRemovedSchema>;

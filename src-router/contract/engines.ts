import { z } from 'zod';

/** Wire objects of `GET /router/v1/console/engines`: which engine families this node can run, and with what binary. No Node imports here. */

export const engineFamilySchema = z.enum([
  'llama-server',
  'whisper-server',
  'sd-server',
  'koboldcpp',
  'vllm',
  'llama-node',
  'sim',
]);
export type EngineFamily = z.infer<typeof engineFamilySchema>;

export const engineInfoSchema = z
  .object({
    family: engineFamilySchema,
    /** The binary's name (`llama-server`); null for the built-in families. */
    binary: z.string().nullable(),
    available: z.boolean(),
    /** Absolute path of the binary that runs; null when none was found or the family is built in. */
    path: z.string().nullable(),
    /** What `--version` printed (first lines), or the build's record; null when unknown. */
    version: z.string().nullable(),
    found_in: z.enum(['path', 'cache', 'builtin']).nullable(),
    /** Why it is not available; null when it is. */
    reason: z.string().nullable(),
    /** How to get it (a command or the project's address); null when it is available. */
    how_to_get: z.string().nullable(),
  })
  .strict();
export type EngineInfo = z.infer<typeof engineInfoSchema>;

export const enginesAnswerSchema = z.object({ engines: z.array(engineInfoSchema) }).strict();
export type EnginesAnswer = z.infer<typeof enginesAnswerSchema>;

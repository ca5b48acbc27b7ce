import { z } from 'zod';
import { recordSourceSchema } from './node';

/** Wire objects of the console API (`/router/v1/console/*`), shared with the renderer. No Node imports here. */

export const engineStateSchema = z.enum(['stopped', 'starting', 'ready', 'stopping', 'failed']);
export type EngineState = z.infer<typeof engineStateSchema>;

export const laneSchema = z.enum(['text', 'image', 'whisper', 'shared']);
export type Lane = z.infer<typeof laneSchema>;

export const consoleModelSchema = z
  .object({
    publicId: z.string(),
    localId: z.string(),
    nodeId: z.string(),
    backend: z.string(),
    capabilities: z.array(z.string()),
    lane: laneSchema,
    state: engineStateSchema,
    configHash: z.string(),
    modelHash: z.string().nullable(),
    contextsize: z.number().nullable(),
    /** How long the engine stays loaded while idle: an Ollama request's keep_alive, else the config's ttl; null: no limit. */
    idleUnloadMs: z.number().nullable(),
    /** When the idle engine will be stopped (ISO time), while that is armed. */
    unloadsAt: z.string().nullable(),
    lastError: z.string().nullable(),
    /** ID-1: where the config came from (a node's own models: `config_file`); optional for older nodes. */
    source: recordSourceSchema.optional(),
  })
  .strict();
export type ConsoleModel = z.infer<typeof consoleModelSchema>;

export const consoleNodeSchema = z
  .object({
    nodeId: z.string(),
    role: z.enum(['standalone', 'master', 'slave']),
    version: z.string(),
    startedAt: z.string(),
  })
  .strict();
export type ConsoleNode = z.infer<typeof consoleNodeSchema>;

export const consoleModelListSchema = z
  .object({
    node: consoleNodeSchema,
    models: z.array(consoleModelSchema),
  })
  .strict();
export type ConsoleModelList = z.infer<typeof consoleModelListSchema>;

export const consoleErrorSchema = z
  .object({ error: z.object({ message: z.string(), code: z.string() }).strict() })
  .strict();

/** `POST /router/v1/console/session`: a one-time code (from the link `routerdesk serve` opens) for the console token. */
export const consoleSessionRequestSchema = z.object({ code: z.string().min(1).max(200) }).strict();
export type ConsoleSessionRequest = z.infer<typeof consoleSessionRequestSchema>;

export const consoleSessionSchema = z.object({ token: z.string() }).strict();
export type ConsoleSession = z.infer<typeof consoleSessionSchema>;

/** The longest a one-time console code may live (a link printed for an operator to open). */
export const CONSOLE_CODE_MAX_TTL_MS = 10 * 60_000;

/** `POST /router/v1/console/codes`'s optional body: how long the code may wait for its exchange (default 60 s). */
export const consoleCodeRequestSchema = z
  .object({ expiresInMs: z.number().int().min(1000).max(CONSOLE_CODE_MAX_TTL_MS).optional() })
  .strict();
export type ConsoleCodeRequest = z.infer<typeof consoleCodeRequestSchema>;

/** `POST /router/v1/console/codes` (with the console token): a new one-time code, for a link that carries no token. */
export const consoleCodeSchema = z.object({ code: z.string(), expiresInMs: z.number() }).strict();
export type ConsoleCode = z.infer<typeof consoleCodeSchema>;

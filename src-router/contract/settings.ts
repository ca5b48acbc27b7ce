import { z } from 'zod';

/**
 * Wire objects of the node's Settings: `GET /router/v1/console/settings` gives the node config in the
 * YAML's own shape (secrets masked), the JSON Schema it validates against and the file it lives in; `PUT` takes the
 * whole config back (a masked secret left as it was keeps its value). Shared with the renderer: zod only.
 */

export const SETTINGS_MASK = '••••••••';

/**
 * A list secret (operator tokens, client API keys) reads as the mask, this separator and an ID of the stored item only
 * the node can compute: sent back, it keeps that item wherever it now stands in the list.
 */
export const MASK_ITEM_SEPARATOR = '#';

/** Tokens that look like a value someone forgot to change (ROLE-2). */
export const PLACEHOLDER_TOKENS = [
  '',
  'changeme',
  'change-me',
  'change_me',
  'token',
  'secret',
  'password',
  'placeholder',
  'xxx',
  'todo',
  'default',
  'example',
];

/** ROLE-2: a cluster token a master or slave refuses (a placeholder, or shorter than 8 characters). */
export const isPlaceholderToken = (token: string) =>
  PLACEHOLDER_TOKENS.includes(token.trim().toLowerCase()) || token.trim().length < 8;

/** `GET /health`: liveness; `started_at` tells a restarted node from the one before it (the Settings screen waits on it). */
export const healthAnswerSchema = z
  .object({
    status: z.literal('ok'),
    node_id: z.string(),
    role: z.string(),
    version: z.string(),
    uptime_s: z.number(),
    started_at: z.string(),
  })
  .strict();
export type HealthAnswer = z.infer<typeof healthAnswerSchema>;

export const settingsViewSchema = z
  .object({
    config: z.record(z.string(), z.unknown()),
    schema: z.record(z.string(), z.unknown()),
    path: z.string(),
    /** The last restart could not use the config written then: why (the node runs on the config before it). */
    restartError: z.string().nullable(),
    /** After such a restart: the file the previous config was put back from (`<file>.bak`); absent from older nodes. */
    restoredFrom: z.string().nullable().optional(),
  })
  .strict();
export type SettingsView = z.infer<typeof settingsViewSchema>;

export const settingsPutSchema = z.object({ config: z.record(z.string(), z.unknown()) }).strict();
export type SettingsPut = z.infer<typeof settingsPutSchema>;

export const settingsAnswerSchema = z
  .object({
    written: z.boolean().describe('false: the config equals the file, nothing was written'),
    restarted: z.boolean().describe('the node restarts on the new config right after this answer'),
    /** Where the node listens after the restart (the same port when the config leaves it to the node). */
    url: z.string(),
    path: z.string(),
    code: z
      .string()
      .optional()
      .describe(
        'when the node moves to another address: a one-time console code the console opens the new address with (10 minutes)',
      ),
  })
  .strict();
export type SettingsAnswer = z.infer<typeof settingsAnswerSchema>;

import { z } from 'zod';

/**
 * How the desktop app keeps remote clusters' console tokens at rest (UI-5), as its preload hands it to the renderer:
 * `sealed` only where the OS keychain encrypts them; `how` says it in a sentence for Settings and the cluster dialog.
 */
export const tokenStorageSchema = z.object({ sealed: z.boolean(), how: z.string().min(1).max(300) }).strict();
export type TokenStorage = z.infer<typeof tokenStorageSchema>;

import { z } from 'zod';

/**
 * Wire objects of the Add model dialog's file browser: `GET /router/v1/console/model-files?dir=` lists one folder
 * inside the folders the node may read (`roots`: models.shared_dir, models.config_dir, models.browse_dirs), and
 * `POST /router/v1/console/model-files/inspect` says what a GGUF file's header holds. Shared with the renderer: zod only.
 */

export const MODEL_FILES_PATH = '/router/v1/console/model-files';
export const MODEL_FILE_INSPECT_PATH = '/router/v1/console/model-files/inspect';

/** Entries a listing returns at most (folders first, then files, each by name); `truncated` says when more exist. */
export const MODEL_FILES_MAX_ENTRIES = 1000;

/** Query of the folder listing: one folder inside the allowed ones; absent, the allowed folders themselves. */
export const modelFilesQuerySchema = z.object({ dir: z.string().optional() }).strict();

export const modelFileEntrySchema = z
  .object({
    name: z.string(),
    path: z.string(),
    kind: z.enum(['dir', 'file']),
    /** Bytes of a file; null for a folder. */
    size: z.number().int().nonnegative().nullable(),
    gguf: z.boolean(),
  })
  .strict();
export type ModelFileEntry = z.infer<typeof modelFileEntrySchema>;

export const modelFileListSchema = z
  .object({
    roots: z.array(z.string()),
    /** The folder listed (its real path); null when no folder was asked: the roots alone. */
    dir: z.string().nullable(),
    /** The folder above `dir` when it is still inside a root, else null. */
    parent: z.string().nullable(),
    entries: z.array(modelFileEntrySchema),
    truncated: z.boolean(),
  })
  .strict();
export type ModelFileList = z.infer<typeof modelFileListSchema>;

export const modelFileInspectRequestSchema = z
  .object({ path: z.string().min(1, 'a path to a GGUF file').max(4096) })
  .strict();
export type ModelFileInspectRequest = z.infer<typeof modelFileInspectRequestSchema>;

export const modelFileInspectionSchema = z
  .object({
    path: z.string(),
    size: z.number().int().nonnegative(),
    /** `general.architecture`, e.g. `llama`, `bert`, `clip`. */
    architecture: z.string().nullable(),
    /** `general.name`. */
    name: z.string().nullable(),
    /** `<architecture>.context_length`: the context the model was trained for. */
    context_length: z.number().int().nullable(),
    embedding: z.boolean(),
    /** An `mmproj*.gguf` beside the file, or the file itself when it is a projector. */
    vision_projector: z.string().nullable(),
    /** The capabilities the header suggests (text, embedding, multimodal). */
    capabilities: z.array(z.string()),
  })
  .strict();
export type ModelFileInspection = z.infer<typeof modelFileInspectionSchema>;

import { z } from 'zod';

/**
 * The fields the router itself reads from client requests. Clients send many more (sampling options, tools, …):
 * those pass through to the engine untouched, so these objects are loose, not strict.
 */
const model = z.string({ error: 'model is required' }).min(1, 'model must not be empty');

export const chatRequestSchema = z.looseObject({
  model,
  messages: z
    .array(z.looseObject({ role: z.string() }), { error: 'messages must be an array of messages' })
    .min(1, 'messages must not be empty'),
  stream: z.boolean().optional(),
});

export const completionRequestSchema = z.looseObject({
  model,
  prompt: z.union([z.string(), z.array(z.string())], { error: 'prompt must be a string or an array of strings' }),
  stream: z.boolean().optional(),
});

export const embeddingRequestSchema = z.looseObject({
  model,
  input: z.union([z.string(), z.array(z.string()), z.array(z.number()), z.array(z.array(z.number()))], {
    error: 'input must be a string or an array',
  }),
});

export const imageRequestSchema = z.looseObject({
  model,
  prompt: z.string({ error: 'prompt is required' }).min(1),
  n: z.number().int().min(1).max(16).optional(),
  size: z
    .string()
    .regex(/^\d+x\d+$/, 'size must look like 512x512')
    .optional(),
  steps: z.number().int().min(1).max(1000).optional(),
});

/** Ollama's keep_alive: seconds, or a Go duration string; negative keeps the model loaded (parsed by the router). */
const keepAlive = z
  .union([z.string(), z.number()], { error: 'keep_alive must be a duration string (e.g. "5m") or a number of seconds' })
  .optional();
const ollamaOptions = z.record(z.string(), z.unknown(), { error: 'options must be an object' }).optional();
/** `format`: "json", or a JSON schema the answer must follow. */
const ollamaFormat = z
  .union([z.literal('json'), z.literal(''), z.record(z.string(), z.unknown())], {
    error: 'format must be "json" or a JSON schema object',
  })
  .optional();

export const ollamaChatSchema = z.looseObject({
  model,
  // No messages (or an empty list): Ollama's "load the model" call.
  messages: z
    .array(
      z.looseObject({
        role: z.string(),
        content: z.string().optional(),
        images: z.array(z.string()).optional(),
        tool_calls: z.array(z.looseObject({})).optional(),
      }),
      { error: 'messages must be an array of messages' },
    )
    .optional(),
  stream: z.boolean().optional(),
  options: ollamaOptions,
  format: ollamaFormat,
  keep_alive: keepAlive,
  tools: z.array(z.looseObject({ type: z.string() }), { error: 'tools must be an array of tools' }).optional(),
});

export const ollamaGenerateSchema = z.looseObject({
  model,
  // No prompt: Ollama's "load the model" call.
  prompt: z.string().optional(),
  system: z.string().optional(),
  stream: z.boolean().optional(),
  options: ollamaOptions,
  format: ollamaFormat,
  keep_alive: keepAlive,
});

export const ollamaEmbedSchema = z.looseObject({
  model,
  input: z.union([z.string(), z.array(z.string())]).optional(),
  prompt: z.string().optional(),
  keep_alive: keepAlive,
});

/** `/api/show`: the model by `model` (or its older name, `name`). */
export const ollamaModelNameSchema = z
  .looseObject({
    model: z.string().min(1).optional(),
    name: z.string().min(1).optional(),
    verbose: z.boolean().optional(),
  })
  .refine((b) => b.model !== undefined || b.name !== undefined, { message: 'model is required', path: ['model'] })
  .meta({ anyOf: [{ required: ['model'] }, { required: ['name'] }] });

const IMAGE_PART_TYPES = new Set(['image_url', 'input_image', 'image']);

/**
 * A chat body carrying image input: an image content part (OpenAI), or an `images` list (Ollama, top level or per
 * message). Such a request needs a model with vision: it is lent only to a multimodal helper (LLM-1).
 */
export function hasImageInput(body: Record<string, unknown> | undefined): boolean {
  if (!body) return false;
  if (Array.isArray(body.images) && body.images.length > 0) return true;
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return messages.some((m: unknown) => {
    if (!m || typeof m !== 'object') return false;
    const { content, images } = m as Record<string, unknown>;
    if (Array.isArray(images) && images.length > 0) return true;
    return (
      Array.isArray(content) &&
      content.some(
        (part: unknown) =>
          !!part && typeof part === 'object' && IMAGE_PART_TYPES.has(String((part as Record<string, unknown>).type)),
      )
    );
  });
}

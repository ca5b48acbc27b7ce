import { z } from 'zod';

/**
 * The fields the router itself reads from client requests. Clients send many more (sampling options, tools, …):
 * those pass through to the engine untouched, so these objects are loose, not strict.
 */
const model = z.string({ error: 'model is required' }).min(1, 'model must not be empty');

export const chatRequestSchema = z.looseObject({
  model,
  messages: z.array(z.looseObject({ role: z.string() }), { error: 'messages must be an array of messages' }).min(1, 'messages must not be empty'),
  stream: z.boolean().optional(),
});

export const completionRequestSchema = z.looseObject({
  model,
  prompt: z.union([z.string(), z.array(z.string())], { error: 'prompt must be a string or an array of strings' }),
  stream: z.boolean().optional(),
});

export const embeddingRequestSchema = z.looseObject({
  model,
  input: z.union([z.string(), z.array(z.string()), z.array(z.number()), z.array(z.array(z.number()))], { error: 'input must be a string or an array' }),
});

export const imageRequestSchema = z.looseObject({
  model,
  prompt: z.string({ error: 'prompt is required' }).min(1),
  n: z.number().int().min(1).max(16).optional(),
  size: z.string().regex(/^\d+x\d+$/, 'size must look like 512x512').optional(),
  steps: z.number().int().min(1).max(1000).optional(),
});

export const ollamaChatSchema = z.looseObject({
  model,
  messages: z.array(z.looseObject({ role: z.string(), content: z.string().optional(), images: z.array(z.string()).optional() })),
  stream: z.boolean().optional(),
  options: z.record(z.string(), z.unknown()).optional(),
});

export const ollamaGenerateSchema = z.looseObject({
  model,
  prompt: z.string().optional(),
  system: z.string().optional(),
  stream: z.boolean().optional(),
  options: z.record(z.string(), z.unknown()).optional(),
});

export const ollamaEmbedSchema = z.looseObject({
  model,
  input: z.union([z.string(), z.array(z.string())]).optional(),
  prompt: z.string().optional(),
});

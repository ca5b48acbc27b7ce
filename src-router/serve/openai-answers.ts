/**
 * The parts of engines' OpenAI answers the Ollama translation reads (chat, completion, stream chunk, embeddings).
 * Loose: engines add fields of their own; a field that is there must have its type.
 */
import { z } from 'zod';
import { RouterError } from './errors';

const toolCall = z.looseObject({
  index: z.number().optional(),
  id: z.string().nullish(),
  function: z.looseObject({ name: z.string().nullish(), arguments: z.string().nullish() }).optional(),
});

const usage = z.looseObject({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() });

/** llama-server's `timings` (the sim and the built-in engine report the same). */
const timings = z.looseObject({
  prompt_n: z.number().optional(),
  prompt_ms: z.number().optional(),
  predicted_n: z.number().optional(),
  predicted_ms: z.number().optional(),
});

const choice = z.looseObject({
  message: z
    .looseObject({
      role: z.string().optional(),
      content: z.string().nullish(),
      tool_calls: z.array(toolCall).nullish(),
    })
    .optional(),
  delta: z.looseObject({ content: z.string().nullish(), tool_calls: z.array(toolCall).nullish() }).optional(),
  text: z.string().optional(),
  finish_reason: z.string().nullish(),
});

/** A chat completion, a text completion, or one chunk of either's stream. */
export const openAIAnswerSchema = z.looseObject({
  choices: z.array(choice).optional(),
  usage: usage.nullish(),
  timings: timings.optional(),
});
export type OpenAIAnswer = z.infer<typeof openAIAnswerSchema>;
export type OpenAIToolCall = z.infer<typeof toolCall>;
export type EngineTimings = z.infer<typeof timings>;

export const openAIEmbeddingAnswerSchema = z.looseObject({
  data: z.array(z.looseObject({ embedding: z.array(z.number()) })),
  usage: usage.nullish(),
});

/** Parses an engine's answer; one that does not have the shape is a 502 naming the field. */
export function parseAnswer<T extends z.ZodType>(schema: T, value: unknown, model: string): z.output<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw new RouterError(
    502,
    'engine_bad_response',
    `engine for model '${model}' answered an unexpected shape: ${issue.path.map(String).join('.') || 'body'}: ${issue.message}`,
  );
}

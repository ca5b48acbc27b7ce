/** Request bodies of the OpenAI-compatible endpoints (unknown fields ignored, as llama-server does) and error shapes. */
import { z } from 'zod';

export class EngineHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = status === 400
      ? 'invalid_request_error'
      : status === 404
        ? 'not_found_error'
        : status === 503
          ? 'unavailable_error'
          : 'server_error',
  ) {
    super(message);
    this.name = 'EngineHttpError';
  }
}

/** The OpenAI error body; `code` is the HTTP status, as llama-server sends it. */
export function errorBody(status: number, message: string, type: string) {
  return { error: { code: status, message, type } };
}

const nullable = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

const sampling = {
  model: nullable(z.string()),
  stream: nullable(z.boolean()),
  stream_options: nullable(z.object({ include_usage: nullable(z.boolean()) })),
  max_tokens: nullable(z.number().int().min(0)),
  temperature: nullable(z.number().min(0).max(10)),
  top_p: nullable(z.number().gt(0).max(1)),
  seed: nullable(z.number().int()),
  stop: nullable(z.union([z.string(), z.array(z.string()).max(16)])),
  n: nullable(z.literal(1)),
};

const contentPart = z.object({ type: z.string(), text: z.string().optional() });
const toolCall = z.object({
  id: z.string(),
  type: nullable(z.literal('function')),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
const message = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
  tool_calls: nullable(z.array(toolCall)),
  tool_call_id: nullable(z.string()),
});

const jsonSchema = z.record(z.string(), z.unknown());
const responseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  // llama-server also takes a schema on json_object.
  z.object({ type: z.literal('json_object'), schema: nullable(jsonSchema) }),
  z.object({
    type: z.literal('json_schema'),
    json_schema: z.object({ name: nullable(z.string()), schema: nullable(jsonSchema), strict: nullable(z.boolean()) }),
  }),
]);
const tool = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'a function name is 1-64 letters, digits, _ or -'),
    description: nullable(z.string()),
    parameters: nullable(jsonSchema),
  }),
});
const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) }),
]);

export const chatRequestSchema = z
  .object({
    ...sampling,
    messages: z.array(message).min(1),
    max_completion_tokens: nullable(z.number().int().min(0)),
    response_format: nullable(responseFormat),
    tools: nullable(z.array(tool).max(128)),
    tool_choice: nullable(toolChoice),
    parallel_tool_calls: nullable(z.boolean()),
  })
  .superRefine((req, ctx) => {
    const names = new Set((req.tools ?? []).map((t) => t.function.name));
    const choice = req.tool_choice;
    if (choice && choice !== 'none' && choice !== 'auto' && names.size === 0)
      ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: 'needs a non-empty tools list' });
    if (choice && typeof choice === 'object' && names.size > 0 && !names.has(choice.function.name))
      ctx.addIssue({
        code: 'custom',
        path: ['tool_choice'],
        message: `names "${choice.function.name}", which is not in tools`,
      });
  });

export const completionRequestSchema = z.object({
  ...sampling,
  prompt: z.union([z.string(), z.array(z.string()).length(1)]),
  // Structured output on completions too (an Ollama generate with `format`): the same grammar as a chat's.
  response_format: nullable(responseFormat),
});

export const embeddingRequestSchema = z.object({
  model: nullable(z.string()),
  input: z.union([z.string(), z.array(z.string()).min(1).max(256)]),
  encoding_format: nullable(z.enum(['float', 'base64'])),
});

export type ChatRequest = z.infer<typeof chatRequestSchema>;
export type CompletionRequest = z.infer<typeof completionRequestSchema>;
export type EmbeddingRequest = z.infer<typeof embeddingRequestSchema>;
export type ChatMessage = z.infer<typeof message>;
export type ChatTool = z.infer<typeof tool>;

/** Parses a body or throws a 400 naming the first bad field. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new EngineHttpError(400, 'request body must be a JSON object');
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  throw new EngineHttpError(400, `invalid request: ${where}${issue?.message ?? 'bad body'}`);
}

/** Text of a message's content (text parts joined; other parts rejected). */
export function messageText(m: ChatMessage): string {
  if (typeof m.content === 'string') return m.content;
  if (!m.content) return '';
  return m.content
    .map((part) => {
      if (part.type !== 'text')
        throw new EngineHttpError(400, `content part type "${part.type}" is not supported by this model`);
      return part.text ?? '';
    })
    .join('');
}

export function stopList(stop: string | string[] | undefined): string[] {
  if (stop === undefined) return [];
  return (Array.isArray(stop) ? stop : [stop]).filter((s) => s.length > 0);
}

import { z } from 'zod';

/**
 * OpenAI's Responses API request (`POST /v1/responses`) for text models, as far as the router translates it onto a chat
 * completion. Fields it cannot honour (stored conversations, background runs, built-in tools) are refused by name;
 * other unknown fields are ignored, as the rest of the client API does.
 */
const model = z.string({ error: 'model is required' }).min(1, 'model must not be empty');
const refused = (why: string) => z.never({ error: why }).nullish();

/** Adds `type: "message"` to an item that has a role and no type (the short form `{role, content}`). */
const typedItem = (v: unknown) =>
  v && typeof v === 'object' && !Array.isArray(v) && !('type' in v) && 'role' in v ? { ...v, type: 'message' } : v;

/**
 * A string where a list is also allowed becomes that list, so a bad entry of the list is reported at its own path
 * (a union would report only "string or array" at the parent).
 */
const listOrString = <T extends z.ZodType>(list: z.ZodArray<T>, fromString: (s: string) => unknown[]) =>
  z.preprocess((v) => (typeof v === 'string' ? fromString(v) : v), list);
const textPart = (text: string) => [{ type: 'input_text', text }];

const inputText = z.looseObject({ type: z.literal('input_text'), text: z.string({ error: 'text must be a string' }) });
const outputText = z.looseObject({
  type: z.literal('output_text'),
  text: z.string({ error: 'text must be a string' }),
});
const refusal = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
const inputImage = z.looseObject({
  type: z.literal('input_image'),
  image_url: z
    .string({ error: 'image_url (a URL or a data: URL) is required: file_id images are not supported here' })
    .min(1),
  detail: z.enum(['low', 'high', 'auto', 'original']).nullish(),
});

const contentPart = z.discriminatedUnion('type', [inputText, outputText, refusal, inputImage], {
  error: 'a content part must be of type input_text, input_image, output_text or refusal',
});

export const responsesMessageSchema = z.looseObject({
  type: z.literal('message'),
  role: z.enum(['user', 'assistant', 'system', 'developer'], {
    error: 'role must be user, assistant, system or developer',
  }),
  content: listOrString(
    z.array(contentPart, { error: 'content must be a string or an array of content parts' }),
    textPart,
  ),
});

export const responsesFunctionCallSchema = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string({ error: 'call_id is required' }).min(1),
  name: z.string({ error: 'name is required' }).min(1),
  arguments: z.string({ error: 'arguments must be a JSON string' }),
  id: z.string().nullish(),
});

export const responsesFunctionCallOutputSchema = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string({ error: 'call_id is required' }).min(1),
  output: listOrString(
    z.array(z.discriminatedUnion('type', [inputText, outputText], { error: 'output parts must be input_text' }), {
      error: 'output must be a string or text parts',
    }),
    textPart,
  ),
});

const inputItem = z.preprocess(
  typedItem,
  z.discriminatedUnion(
    'type',
    [responsesMessageSchema, responsesFunctionCallSchema, responsesFunctionCallOutputSchema],
    {
      error: 'an input item must be a message, a function_call or a function_call_output',
    },
  ),
);

export const responsesFunctionToolSchema = z.looseObject({
  type: z.literal('function'),
  name: z
    .string({ error: 'name is required' })
    .regex(/^[a-zA-Z0-9_-]{1,64}$/, 'name must be 1-64 letters, digits, _ or -'),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

const textFormat = z.discriminatedUnion(
  'type',
  [
    z.looseObject({ type: z.literal('text') }),
    z.looseObject({ type: z.literal('json_object') }),
    z.looseObject({
      type: z.literal('json_schema'),
      name: z.string({ error: 'name is required' }).min(1),
      schema: z.record(z.string(), z.unknown(), { error: 'schema must be a JSON Schema object' }),
      description: z.string().nullish(),
      strict: z.boolean().nullish(),
    }),
  ],
  { error: 'format.type must be text, json_object or json_schema' },
);

export const responsesToolChoiceSchema = z.union(
  [z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.literal('function'), name: z.string().min(1) })],
  { error: 'tool_choice must be none, auto, required or {type: "function", name}' },
);

export const responsesRequestSchema = z.looseObject({
  model,
  input: listOrString(z.array(inputItem, { error: 'input must be a string or an array of input items' }), (text) => [
    { type: 'message', role: 'user', content: text },
  ]),
  instructions: z.string({ error: 'instructions must be a string' }).nullish(),
  max_output_tokens: z.number().int().min(1, 'max_output_tokens must be at least 1').nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  stream: z.boolean().nullish(),
  tools: z
    .array(
      z.discriminatedUnion('type', [responsesFunctionToolSchema], {
        error: 'only function tools are supported (built-in tools such as web_search are not)',
      }),
    )
    .nullish(),
  tool_choice: responsesToolChoiceSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  text: z.looseObject({ format: textFormat.nullish() }).nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  previous_response_id: refused(
    'previous_response_id is not supported: this node keeps no responses; send the whole conversation in input',
  ),
  conversation: refused(
    'conversation is not supported: this node keeps no conversations; send the whole conversation in input',
  ),
  prompt: refused('prompt templates are not supported; send instructions and input'),
  background: z.literal(false, { error: 'background responses are not supported' }).nullish(),
});

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
export type ResponsesInputItem = z.infer<typeof inputItem>;
export type ResponsesToolChoice = z.infer<typeof responsesToolChoiceSchema>;

/** What the translation reads from a chat completion (the engine's answer): loose, every other field ignored. */
const toolCall = z.looseObject({
  index: z.number().int().optional(),
  id: z.string().nullish(),
  type: z.string().nullish(),
  function: z.looseObject({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});
const chatUsage = z.looseObject({
  prompt_tokens: z.number().nullish(),
  completion_tokens: z.number().nullish(),
  total_tokens: z.number().nullish(),
});

export const chatCompletionAnswerSchema = z.looseObject({
  id: z.string().nullish(),
  created: z.number().nullish(),
  choices: z.array(
    z.looseObject({
      message: z.looseObject({ content: z.string().nullish(), tool_calls: z.array(toolCall).nullish() }),
      finish_reason: z.string().nullish(),
    }),
  ),
  usage: chatUsage.nullish(),
});

export const chatCompletionChunkSchema = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        delta: z.looseObject({ content: z.string().nullish(), tool_calls: z.array(toolCall).nullish() }).nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: chatUsage.nullish(),
});

export type ChatCompletionAnswer = z.infer<typeof chatCompletionAnswerSchema>;
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;
export type ChatUsage = z.infer<typeof chatUsage>;

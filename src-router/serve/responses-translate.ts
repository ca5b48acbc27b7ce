/**
 * OpenAI Responses API ↔ chat completions, the shape every text engine speaks. Pure functions: a Responses request
 * becomes a chat body; a chat completion becomes a Response object. The event stream is `responses-stream.ts`.
 */
import { randomUUID } from 'node:crypto';
import type { ChatCompletionAnswer, ChatUsage, ResponsesInputItem, ResponsesRequest } from '../contract';

type Json = Record<string, unknown>;

/** Ids of one response and its items; tests pass a deterministic one. */
export type IdMaker = (prefix: 'resp' | 'msg' | 'fc') => string;
export const randomIds: IdMaker = (prefix) => `${prefix}_${randomUUID().replaceAll('-', '')}`;

function partToChat(part: Extract<ResponsesInputItem, { type: 'message' }>['content'][number] & object): Json {
  switch (part.type) {
    case 'input_image':
      return {
        type: 'image_url',
        image_url: {
          url: part.image_url,
          ...(part.detail && part.detail !== 'original' ? { detail: part.detail } : {}),
        },
      };
    case 'refusal':
      return { type: 'text', text: part.refusal };
    default:
      return { type: 'text', text: part.text };
  }
}

function messageContent(content: Extract<ResponsesInputItem, { type: 'message' }>['content']): string | Json[] {
  // Text-only content stays a string: every engine reads that, not every one reads parts.
  if (content.every((p) => p.type !== 'input_image')) return content.map((p) => String(partToChat(p).text)).join('');
  return content.map(partToChat);
}

/** Input items → chat messages: function calls join the assistant turn they follow, their outputs become tool messages. */
export function responsesInputToMessages(input: ResponsesRequest['input'], instructions?: string | null): Json[] {
  const messages: Json[] = [];
  if (instructions) messages.push({ role: 'system', content: instructions });
  for (const item of input) {
    if (item.type === 'message') {
      messages.push({ role: item.role, content: messageContent(item.content) });
      continue;
    }
    if (item.type === 'function_call') {
      const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
      const last = messages.at(-1);
      if (last?.role === 'assistant') last.tool_calls = [...((last.tool_calls as Json[] | undefined) ?? []), call];
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      continue;
    }
    const output = item.output.map((p) => p.text).join('');
    messages.push({ role: 'tool', tool_call_id: item.call_id, content: output });
  }
  return messages;
}

/** The chat completion body for a Responses request. */
export function responsesToChat(req: ResponsesRequest): Json {
  const chat: Json = { model: req.model, messages: responsesInputToMessages(req.input, req.instructions) };
  if (req.max_output_tokens != null) chat.max_tokens = req.max_output_tokens;
  if (req.temperature != null) chat.temperature = req.temperature;
  if (req.top_p != null) chat.top_p = req.top_p;
  if (req.tools?.length) {
    chat.tools = req.tools.map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        parameters: t.parameters ?? { type: 'object', properties: {} },
        ...(t.strict != null ? { strict: t.strict } : {}),
      },
    }));
  }
  if (req.tool_choice != null)
    chat.tool_choice =
      typeof req.tool_choice === 'string'
        ? req.tool_choice
        : { type: 'function', function: { name: req.tool_choice.name } };
  if (req.parallel_tool_calls != null) chat.parallel_tool_calls = req.parallel_tool_calls;
  const format = req.text?.format;
  if (format?.type === 'json_object') chat.response_format = { type: 'json_object' };
  if (format?.type === 'json_schema') {
    chat.response_format = {
      type: 'json_schema',
      json_schema: {
        name: format.name,
        schema: format.schema,
        ...(format.strict != null ? { strict: format.strict } : {}),
        ...(format.description ? { description: format.description } : {}),
      },
    };
  }
  if (req.stream) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

/** Chat parameter names as the Responses client wrote them (a refusal names what the client sent). */
export const RESPONSES_PARAM: Record<string, string> = { response_format: 'text.format' };

export function responsesUsage(u: ChatUsage | null | undefined) {
  const input = u?.prompt_tokens ?? 0;
  const output = u?.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u?.total_tokens ?? input + output,
  };
}

export function outputTextPart(text: string) {
  return { type: 'output_text' as const, text, annotations: [], logprobs: [] };
}

export function messageItem(id: string, text: string, status: 'in_progress' | 'completed' | 'incomplete') {
  return {
    id,
    type: 'message' as const,
    role: 'assistant' as const,
    status,
    content: status === 'in_progress' ? [] : [outputTextPart(text)],
  };
}

export function functionCallItem(
  id: string,
  callId: string,
  name: string,
  args: string,
  status: 'in_progress' | 'completed',
) {
  return { id, type: 'function_call' as const, call_id: callId, name, arguments: args, status };
}

/** The Response object around an output, echoing the request's settings as OpenAI does. */
export function responseObject(
  req: ResponsesRequest,
  o: {
    id: string;
    model: string;
    createdAt: number;
    status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
    output: unknown[];
    usage?: ChatUsage | null;
    error?: { code: string; message: string };
  },
) {
  return {
    id: o.id,
    object: 'response' as const,
    created_at: o.createdAt,
    status: o.status,
    ...(o.status === 'completed' || o.status === 'incomplete' ? { completed_at: Math.floor(Date.now() / 1000) } : {}),
    error: o.error ?? null,
    incomplete_details: o.status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    model: o.model,
    output: o.output,
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: null,
    temperature: req.temperature ?? null,
    text: { format: req.text?.format ?? { type: 'text' } },
    tool_choice: req.tool_choice ?? 'auto',
    tools: (req.tools ?? []).map((t) => ({
      type: 'function',
      name: t.name,
      description: t.description ?? null,
      parameters: t.parameters ?? null,
      strict: t.strict ?? null,
    })),
    top_p: req.top_p ?? null,
    truncation: 'disabled',
    metadata: req.metadata ?? {},
    store: false,
    usage: o.status === 'in_progress' ? null : responsesUsage(o.usage),
  };
}

/** A chat completion → the Response object: one message item with the text (when there is text), one function_call item per tool call. */
export function chatToResponse(
  req: ResponsesRequest,
  answer: ChatCompletionAnswer,
  model: string,
  ids: IdMaker = randomIds,
) {
  const choice = answer.choices[0];
  const text = choice?.message.content ?? '';
  const output: unknown[] = [];
  if (text || !choice?.message.tool_calls?.length)
    output.push(messageItem(ids('msg'), text, choice?.finish_reason === 'length' ? 'incomplete' : 'completed'));
  for (const call of choice?.message.tool_calls ?? []) {
    output.push(
      functionCallItem(
        ids('fc'),
        call.id ?? ids('fc'),
        call.function?.name ?? '',
        call.function?.arguments ?? '',
        'completed',
      ),
    );
  }
  const createdAt = answer.created ?? Math.floor(Date.now() / 1000);
  return responseObject(req, {
    id: ids('resp'),
    model,
    createdAt,
    status: choice?.finish_reason === 'length' ? 'incomplete' : 'completed',
    output,
    usage: answer.usage,
  });
}

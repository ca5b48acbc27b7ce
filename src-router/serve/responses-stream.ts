/**
 * A chat completion stream → the Responses event stream: `response.created`, `response.in_progress`, then per output
 * item `response.output_item.added` … `response.output_item.done` (text: `content_part.added`, `output_text.delta`,
 * `output_text.done`, `content_part.done`; function calls: `function_call_arguments.delta` / `.done`), and
 * `response.completed` with the usage. A failure after the start ends the stream with `error` and `response.failed`.
 */
import { type ChatUsage, chatCompletionChunkSchema, type ResponsesRequest } from '../contract';
import { RouterError } from './errors';
import {
  functionCallItem,
  type IdMaker,
  messageItem,
  outputTextPart,
  randomIds,
  responseObject,
} from './responses-translate';

type Json = Record<string, unknown>;

interface OpenText {
  kind: 'text';
  index: number;
  id: string;
  text: string;
}
interface OpenCall {
  kind: 'call';
  index: number;
  id: string;
  chatIndex: number;
  callId: string;
  name: string;
  args: string;
}

export async function* chatStreamToResponses(
  chunks: AsyncIterable<unknown>,
  req: ResponsesRequest,
  model: string,
  ids: IdMaker = randomIds,
): AsyncGenerator<Json> {
  let seq = 0;
  const event = (type: string, fields: Json): Json => ({ type, sequence_number: seq++, ...fields });
  const id = ids('resp');
  const createdAt = Math.floor(Date.now() / 1000);
  const output: unknown[] = [];
  let open: OpenText | OpenCall | undefined;
  let usage: ChatUsage | null | undefined;
  let finish: string | null | undefined;

  const response = (
    status: 'in_progress' | 'completed' | 'incomplete' | 'failed',
    error?: { code: string; message: string },
  ) =>
    responseObject(req, { id, model, createdAt, status, output: status === 'in_progress' ? [] : output, usage, error });

  function* close(): Generator<Json> {
    if (!open) return;
    const o = open;
    open = undefined;
    if (o.kind === 'text') {
      const status = finish === 'length' ? 'incomplete' : 'completed';
      yield event('response.output_text.done', {
        item_id: o.id,
        output_index: o.index,
        content_index: 0,
        text: o.text,
        logprobs: [],
      });
      yield event('response.content_part.done', {
        item_id: o.id,
        output_index: o.index,
        content_index: 0,
        part: outputTextPart(o.text),
      });
      const item = messageItem(o.id, o.text, status);
      output.push(item);
      yield event('response.output_item.done', { output_index: o.index, item });
    } else {
      yield event('response.function_call_arguments.done', {
        item_id: o.id,
        output_index: o.index,
        name: o.name,
        arguments: o.args,
      });
      const item = functionCallItem(o.id, o.callId, o.name, o.args, 'completed');
      output.push(item);
      yield event('response.output_item.done', { output_index: o.index, item });
    }
  }

  yield event('response.created', { response: response('in_progress') });
  yield event('response.in_progress', { response: response('in_progress') });
  try {
    for await (const raw of chunks) {
      const parsed = chatCompletionChunkSchema.safeParse(raw);
      if (!parsed.success) continue;
      const chunk = parsed.data;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      if (choice.finish_reason) finish = choice.finish_reason;
      const text = choice.delta?.content;
      if (text) {
        if (open?.kind !== 'text') {
          yield* close();
          open = { kind: 'text', index: output.length, id: ids('msg'), text: '' };
          yield event('response.output_item.added', {
            output_index: open.index,
            item: messageItem(open.id, '', 'in_progress'),
          });
          yield event('response.content_part.added', {
            item_id: open.id,
            output_index: open.index,
            content_index: 0,
            part: outputTextPart(''),
          });
        }
        open.text += text;
        yield event('response.output_text.delta', {
          item_id: open.id,
          output_index: open.index,
          content_index: 0,
          delta: text,
          logprobs: [],
        });
      }
      for (const call of choice.delta?.tool_calls ?? []) {
        const chatIndex = call.index ?? 0;
        if (open?.kind !== 'call' || open.chatIndex !== chatIndex) {
          yield* close();
          const itemId = ids('fc');
          open = {
            kind: 'call',
            index: output.length,
            id: itemId,
            chatIndex,
            callId: call.id ?? itemId,
            name: call.function?.name ?? '',
            args: '',
          };
          yield event('response.output_item.added', {
            output_index: open.index,
            item: functionCallItem(open.id, open.callId, open.name, '', 'in_progress'),
          });
        }
        const delta = call.function?.arguments ?? '';
        if (delta) {
          open.args += delta;
          yield event('response.function_call_arguments.delta', { item_id: open.id, output_index: open.index, delta });
        }
      }
    }
    yield* close();
    if (!output.length) {
      // An empty answer is still one (empty) message, as in the non-streamed Response.
      const item = messageItem(ids('msg'), '', 'completed');
      yield event('response.output_item.added', { output_index: 0, item: messageItem(item.id, '', 'in_progress') });
      output.push(item);
      yield event('response.output_item.done', { output_index: 0, item });
    }
    const done = response(finish === 'length' ? 'incomplete' : 'completed');
    yield event(done.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: done });
  } catch (err) {
    // The client left: nothing to tell it.
    if (err instanceof RouterError && err.status === 499) throw err;
    if ((err as Error).name === 'AbortError') throw err;
    const e =
      err instanceof RouterError
        ? err
        : new RouterError(502, 'stream_error', (err as Error).message ?? 'the stream failed');
    yield event('error', { code: e.code, message: e.message, param: e.param });
    yield event('response.failed', { response: response('failed', { code: e.code, message: e.message }) });
  }
}

import { describe, expect, it } from 'vitest';
import { type ResponsesRequest, RouterError, responsesRequestSchema } from '../../src-router/contract';
import { requestedFeatures, unhonouredFeature } from '../../src-router/engines';
import { chatStreamToResponses, chatToResponse, type IdMaker, responsesToChat } from '../../src-router/serve';

const parse = (body: unknown): ResponsesRequest => responsesRequestSchema.parse(body);
const counter = (): IdMaker => {
  let n = 0;
  return (prefix) => `${prefix}_${++n}`;
};
const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};
async function* chunks(list: unknown[], fail?: RouterError): AsyncGenerator<unknown> {
  for (const c of list) yield c;
  if (fail) throw fail;
}

const weather = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

describe('Responses request → chat completion', () => {
  it('turns a string input, instructions and sampling into a chat body', () => {
    const chat = responsesToChat(
      parse({
        model: 'm',
        input: 'hello',
        instructions: 'be brief',
        max_output_tokens: 12,
        temperature: 0.2,
        top_p: 0.9,
      }),
    );
    expect(chat).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello' },
      ],
      max_tokens: 12,
      temperature: 0.2,
      top_p: 0.9,
    });
  });

  it('turns message items with text and image parts into chat content, short-form items included', () => {
    const chat = responsesToChat(
      parse({
        model: 'm',
        input: [
          { role: 'developer', content: 'rules' },
          {
            type: 'message',
            role: 'user',
            content: [
              { type: 'input_text', text: 'what is ' },
              { type: 'input_text', text: 'this?' },
            ],
          },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a cat' }] },
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'and this?' },
              { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
            ],
          },
        ],
      }),
    );
    expect(chat.messages).toEqual([
      { role: 'developer', content: 'rules' },
      { role: 'user', content: 'what is this?' },
      { role: 'assistant', content: 'a cat' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'and this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
        ],
      },
    ]);
  });

  it('turns function tools, tool_choice, function_call and function_call_output items into their chat forms', () => {
    const chat = responsesToChat(
      parse({
        model: 'm',
        tools: [
          { type: 'function', name: 'get_weather', description: 'weather now', parameters: weather, strict: true },
        ],
        tool_choice: { type: 'function', name: 'get_weather' },
        parallel_tool_calls: false,
        input: [
          { role: 'user', content: 'weather in Oslo?' },
          { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
          { type: 'function_call', call_id: 'call_2', name: 'get_weather', arguments: '{"city":"Bergen"}' },
          { type: 'function_call_output', call_id: 'call_1', output: '3 C' },
          { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: '5 C' }] },
        ],
      }),
    );
    expect(chat.tools).toEqual([
      {
        type: 'function',
        function: { name: 'get_weather', description: 'weather now', parameters: weather, strict: true },
      },
    ]);
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(chat.parallel_tool_calls).toBe(false);
    expect(chat.messages).toEqual([
      { role: 'user', content: 'weather in Oslo?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Bergen"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '3 C' },
      { role: 'tool', tool_call_id: 'call_2', content: '5 C' },
    ]);
  });

  it('turns text.format into response_format and asks a stream for its usage', () => {
    const chat = responsesToChat(
      parse({
        model: 'm',
        input: 'x',
        stream: true,
        text: { format: { type: 'json_schema', name: 'w', schema: weather, strict: true } },
      }),
    );
    expect(chat.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'w', schema: weather, strict: true },
    });
    expect(chat).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(
      responsesToChat(parse({ model: 'm', input: 'x', text: { format: { type: 'json_object' } } })).response_format,
    ).toEqual({ type: 'json_object' });
    expect(
      responsesToChat(parse({ model: 'm', input: 'x', text: { format: { type: 'text' } } })).response_format,
    ).toBeUndefined();
  });

  it('refuses what it cannot honour, naming the field', () => {
    const issue = (body: unknown) => {
      const r = responsesRequestSchema.safeParse(body);
      if (r.success) throw new Error('parsed');
      return { path: r.error.issues[0].path.join('.'), message: r.error.issues[0].message };
    };
    expect(issue({ model: 'm' }).path).toBe('input');
    expect(issue({ model: 'm', input: 'x', previous_response_id: 'resp_1' })).toMatchObject({
      path: 'previous_response_id',
      message: expect.stringContaining('keeps no responses'),
    });
    expect(issue({ model: 'm', input: 'x', tools: [{ type: 'web_search' }] })).toMatchObject({
      path: 'tools.0.type',
      message: expect.stringContaining('only function tools'),
    });
    expect(issue({ model: 'm', input: [{ role: 'robot', content: 'x' }] }).path).toBe('input.0.role');
    expect(issue({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_audio' }] }] }).path).toBe(
      'input.0.content.0.type',
    );
    expect(
      issue({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }] }),
    ).toMatchObject({ path: 'input.0.content.0.image_url', message: expect.stringContaining('file_id') });
    expect(issue({ model: 'm', input: [{ type: 'reasoning', summary: [] }] }).path).toBe('input.0.type');
    expect(issue({ model: 'm', input: 'x', max_output_tokens: 0 }).path).toBe('max_output_tokens');
  });
});

describe('chat completion → Response', () => {
  const req = parse({ model: 'm', input: 'x', instructions: 'i', max_output_tokens: 8 });

  it('answers text as one message item with usage', () => {
    const r = chatToResponse(
      req,
      {
        created: 100,
        choices: [{ message: { content: 'hi there' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
      },
      'pub',
      counter(),
    );
    expect(r).toMatchObject({
      id: 'resp_2',
      object: 'response',
      created_at: 100,
      status: 'completed',
      model: 'pub',
      instructions: 'i',
      max_output_tokens: 8,
      error: null,
      incomplete_details: null,
      output: [
        {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'hi there', annotations: [] }],
        },
      ],
      usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 },
    });
  });

  it('is incomplete when the answer hit max_output_tokens', () => {
    const r = chatToResponse(
      req,
      { choices: [{ message: { content: 'hi' }, finish_reason: 'length' }] },
      'pub',
      counter(),
    );
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('answers tool calls as function_call items, without an empty message', () => {
    const r = chatToResponse(
      req,
      {
        choices: [
          {
            message: {
              content: null,
              tool_calls: [
                { id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
      'pub',
      counter(),
    );
    expect(r.output).toEqual([
      {
        id: 'fc_1',
        type: 'function_call',
        call_id: 'call_9',
        name: 'get_weather',
        arguments: '{"city":"Oslo"}',
        status: 'completed',
      },
    ]);
    expect(r.status).toBe('completed');
  });
});

describe('chat stream → Responses events', () => {
  const req = parse({ model: 'm', input: 'x', stream: true });
  const delta = (content: string) => ({ choices: [{ delta: { content }, finish_reason: null }] });

  it('emits the official event sequence for text, with numbered events and usage at the end', async () => {
    const events = await collect(
      chatStreamToResponses(
        chunks([
          delta('he'),
          delta('llo'),
          { choices: [{ delta: {}, finish_reason: 'stop' }] },
          { choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } },
        ]),
        req,
        'pub',
        counter(),
      ),
    );
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[6]).toMatchObject({ item_id: 'msg_2', output_index: 0, content_index: 0, text: 'hello' });
    const done = events.at(-1)!.response as {
      status: string;
      model: string;
      output: unknown[];
      usage: { input_tokens: number; output_tokens: number; total_tokens: number };
    };
    expect(done).toMatchObject({
      status: 'completed',
      model: 'pub',
      usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
    });
    expect(done.output).toEqual([
      {
        id: 'msg_2',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'hello', annotations: [], logprobs: [] }],
      },
    ]);
  });

  it('emits function_call items with argument deltas, one item per call', async () => {
    const call = (index: number, args: string, head?: { id: string; name: string }) => ({
      choices: [
        {
          delta: {
            tool_calls: [
              {
                index,
                ...(head ? { id: head.id, type: 'function' } : {}),
                function: { ...(head ? { name: head.name } : {}), arguments: args },
              },
            ],
          },
          finish_reason: null,
        },
      ],
    });
    const events = await collect(
      chatStreamToResponses(
        chunks([
          call(0, '{"city":', { id: 'call_a', name: 'f' }),
          call(0, '"Oslo"}'),
          call(1, '{}', { id: 'call_b', name: 'g' }),
          { choices: [{ delta: {}, finish_reason: 'tool_calls' }] },
        ]),
        req,
        'pub',
        counter(),
      ),
    );
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[5]).toMatchObject({ name: 'f', arguments: '{"city":"Oslo"}', output_index: 0 });
    expect((events.at(-1)!.response as { output: unknown[] }).output).toEqual([
      {
        id: 'fc_2',
        type: 'function_call',
        call_id: 'call_a',
        name: 'f',
        arguments: '{"city":"Oslo"}',
        status: 'completed',
      },
      { id: 'fc_3', type: 'function_call', call_id: 'call_b', name: 'g', arguments: '{}', status: 'completed' },
    ]);
  });

  it('ends a stream that broke with an error event and response.failed; a client that left gets nothing', async () => {
    const events = await collect(
      chatStreamToResponses(
        chunks([delta('a')], new RouterError(502, 'engine_crashed', 'engine died')),
        req,
        'pub',
        counter(),
      ),
    );
    expect(events.slice(-2)).toMatchObject([
      { type: 'error', code: 'engine_crashed', message: 'engine died' },
      {
        type: 'response.failed',
        response: { status: 'failed', error: { code: 'engine_crashed', message: 'engine died' } },
      },
    ]);
    await expect(
      collect(chatStreamToResponses(chunks([], new RouterError(499, 'client_closed', 'gone')), req, 'pub')),
    ).rejects.toThrow('gone');
  });
});

describe('engine features per backend family', () => {
  const json = { type: 'json_schema', json_schema: { name: 'w', schema: weather } };
  it('reads what a chat body asks for', () => {
    expect(requestedFeatures('chat', { response_format: json, tools: [{}] })).toEqual(['response_format', 'tools']);
    expect(requestedFeatures('chat', { response_format: { type: 'text' }, tools: [] })).toEqual([]);
    expect(requestedFeatures('chat', { tools: [{}], tool_choice: 'none' })).toEqual([]);
    expect(requestedFeatures('completion', { response_format: json })).toEqual([]);
  });
  it('names the first feature a family does not honour; unknown backends (static routes) pass', () => {
    expect(unhonouredFeature('sim', 'chat', { tools: [{}] })).toBe('tools');
    expect(unhonouredFeature('koboldcpp', 'chat', { response_format: json })).toBe('response_format');
    expect(unhonouredFeature('llama-node', 'chat', { response_format: json, tools: [{}] })).toBeUndefined();
    expect(unhonouredFeature('llama-server', 'chat', { tools: [{}] })).toBeUndefined();
    expect(unhonouredFeature('static', 'chat', { tools: [{}] })).toBeUndefined();
  });
});

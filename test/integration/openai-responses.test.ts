import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNode, type TestNode } from '../support/node-harness';

// POST /v1/responses and GET /v1/models/{id} on a real node over a real sim engine, with the official openai client.
// The Responses request runs as a chat completion (the sim engine's ring shows the chat it received).
const fast = { load_time: '50ms', token_time: '2ms', step_time: '2ms' };

describe('OpenAI Responses API and model retrieval over the sim engine', () => {
  let node: TestNode;
  let openai: OpenAI;

  beforeAll(async () => {
    node = await startNode({
      models: {
        'chat-a': {
          name: 'sim-chat',
          backend: 'sim',
          capabilities: ['text'],
          contextsize: 4096,
          sim: { ...fast, tokens: 6 },
        },
      },
    });
    openai = new OpenAI({ baseURL: `${node.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(() => node?.stop());

  it('retrieves a model by its public ID, and answers 404 OpenAI-shaped for an unknown one', async () => {
    const m = await openai.models.retrieve('sim-chat');
    expect(m).toMatchObject({ id: 'sim-chat', object: 'model', owned_by: 'test-node' });
    expect(typeof m.created).toBe('number');
    const err = await openai.models.retrieve('no-such-model').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
      code: 'model_not_found',
      param: 'model',
      type: 'invalid_request_error',
    });
  });

  it('answers a Responses request as a chat completion of the engine, with usage and the public model ID', async () => {
    const r = await openai.responses.create({
      model: 'sim-chat',
      instructions: 'be brief',
      input: 'hello there',
      temperature: 0.5,
    });
    expect(r.object).toBe('response');
    expect(r.model).toBe('sim-chat');
    expect(r.status).toBe('completed');
    expect(r.output).toHaveLength(1);
    expect(r.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(r.output_text.length).toBeGreaterThan(0);
    expect(r.usage).toMatchObject({ output_tokens: 6 });
    expect(r.usage!.input_tokens).toBeGreaterThan(0);
    expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens);
    // The engine got a chat: instructions as the system message, then the input.
    const { lanes } = await node.console<{ lanes: { port: number | null }[] }>('/router/v1/console/lanes');
    const port = lanes.find((l) => l.port)!.port;
    const seen = (await (await fetch(`http://127.0.0.1:${port}/sim/seen`)).json()) as { entries: { head: string }[] };
    expect(seen.entries.at(-1)!.head).toBe('system: be brief\nuser: hello there');
  });

  it('is incomplete when the answer hits max_output_tokens (the sim engine then stops at the limit)', async () => {
    const r = await openai.responses.create({ model: 'sim-chat', input: 'hello', max_output_tokens: 3 });
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(r.usage!.output_tokens).toBe(3);
  });

  it('streams the Responses events in order, their text adding up to the final output', async () => {
    const stream = await openai.responses.create({
      model: 'sim-chat',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'stream please' }] }],
      stream: true,
    });
    const types: string[] = [];
    const seqs: number[] = [];
    let deltas = '';
    let final: OpenAI.Responses.Response | undefined;
    for await (const e of stream) {
      types.push(e.type);
      seqs.push(e.sequence_number);
      if (e.type === 'response.output_text.delta') deltas += e.delta;
      if (e.type === 'response.completed') final = e.response;
    }
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.filter((t) => t === 'response.output_text.delta')).toHaveLength(6);
    expect(types.slice(-4)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(seqs).toEqual(seqs.map((_, i) => i));
    expect(final!.model).toBe('sim-chat');
    expect(final!.status).toBe('completed');
    const message = final!.output[0] as OpenAI.Responses.ResponseOutputMessage;
    expect(message.content).toEqual([{ type: 'output_text', text: deltas, annotations: [], logprobs: [] }]);
    expect(final!.usage).toMatchObject({ output_tokens: 6 });
  });

  it('takes a whole tool conversation as input: function_call and function_call_output items', async () => {
    const r = await openai.responses.create({
      model: 'sim-chat',
      input: [
        { role: 'user', content: 'weather in Oslo?' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '3 C and rain' },
      ],
    });
    expect(r.status).toBe('completed');
    expect(r.output_text.length).toBeGreaterThan(0);
  });

  it('refuses, naming the parameter, what the sim engine cannot honour: tools and text.format', async () => {
    const tools = await openai.responses
      .create({
        model: 'sim-chat',
        input: 'x',
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} }, strict: false }],
      })
      .catch((e: unknown) => e);
    expect(tools).toBeInstanceOf(OpenAI.BadRequestError);
    expect((tools as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      param: 'tools',
      code: 'unsupported_parameter',
    });
    expect((tools as Error).message).toContain('sim engine');
    const format = await openai.responses
      .create({
        model: 'sim-chat',
        input: 'x',
        text: { format: { type: 'json_schema', name: 'w', schema: { type: 'object', properties: {} } } },
      })
      .catch((e: unknown) => e);
    expect((format as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      param: 'text.format',
      code: 'unsupported_parameter',
    });
    expect((format as Error).message).toMatch(/^400 text\.format: /);
    // The same refusal on chat completions names the chat parameter.
    const chat = await openai.chat.completions
      .create({
        model: 'sim-chat',
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_object' },
      })
      .catch((e: unknown) => e);
    expect((chat as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      param: 'response_format',
      code: 'unsupported_parameter',
    });
  });

  it('answers bad Responses bodies with a 400 naming the field, OpenAI-shaped', async () => {
    const post = (body: unknown) =>
      fetch(`${node.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const cases: [unknown, string][] = [
      [{ model: 'sim-chat' }, 'input'],
      [{ model: 'sim-chat', input: [{ role: 'robot', content: 'x' }] }, 'input.0.role'],
      [{ model: 'sim-chat', input: 'x', previous_response_id: 'resp_1' }, 'previous_response_id'],
      [{ model: 'sim-chat', input: 'x', tools: [{ type: 'web_search' }] }, 'tools.0.type'],
    ];
    for (const [body, param] of cases) {
      const res = await post(body);
      expect(res.status, param).toBe(400);
      const json = (await res.json()) as { error: { param: string; message: string; type: string } };
      expect(json.error).toMatchObject({ param, type: 'invalid_request_error' });
      expect(json.error.message.startsWith(`${param}: `)).toBe(true);
    }
    const unknown = await post({ model: 'nope', input: 'x' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
  });
});

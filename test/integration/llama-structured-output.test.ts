import { rmSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { writeTinyLlamaGguf } from '../../src-router/engines/llama-node/gguf-writer';
import { startNode, type TestNode, tempDir } from '../support/node-harness';

// Structured output and function calling from the built-in llama.cpp engine, through a real node, with the official
// openai client: a tiny model with random weights answers JSON that validates against the schema and calls functions
// with arguments that validate against their parameters, because node-llama-cpp's grammars allow nothing else.
// Validation is zod's own JSON Schema reader (z.fromJSONSchema).

// No bounded strings: a random model's byte tokens can form invalid UTF-8, which decodes to more characters than the
// grammar counted, so a `maxLength` is not a property the tiny model can be held to (an unbounded string never ends).
const weatherParams = {
  type: 'object',
  properties: {
    city: { enum: ['oslo', 'bergen', 'paris'] },
    unit: { enum: ['celsius', 'fahrenheit'] },
    days: { type: 'array', items: { type: 'boolean' }, maxItems: 3 },
  },
  required: ['city', 'unit'],
  additionalProperties: false,
} as const;
const timeParams = {
  type: 'object',
  properties: { zone: { enum: ['utc', 'local'] } },
  required: ['zone'],
  additionalProperties: false,
} as const;
const answerSchema = {
  type: 'object',
  properties: {
    done: { type: 'boolean' },
    kind: { enum: ['a', 'b', 'c'] },
    tags: { type: 'array', items: { enum: ['x', 'y'] }, maxItems: 4 },
    meta: { type: 'object', properties: { ok: { type: 'null' } }, required: ['ok'] },
  },
  required: ['done', 'kind', 'tags', 'meta'],
  additionalProperties: false,
} as const;

// Numbers of every kind the grammar makes, nested, in arrays and among alternatives; no strings, so every answer ends
// within max_tokens.
const numbersSchema = {
  type: 'object',
  properties: {
    a: { type: 'integer' },
    b: { type: 'number' },
    pick: { enum: ['x', 'y', 3, 4.5, null] },
    inner: {
      type: 'object',
      properties: {
        n: { type: 'integer' },
        list: { type: 'array', items: { type: 'integer' }, maxItems: 4 },
        on: { type: 'boolean' },
      },
      required: ['n', 'list', 'on'],
      additionalProperties: false,
    },
    values: { type: 'array', items: { type: ['number', 'null'] }, maxItems: 4 },
    either: { anyOf: [{ type: 'integer' }, { type: 'boolean' }] },
  },
  required: ['a', 'b', 'pick', 'inner', 'values', 'either'],
  additionalProperties: false,
} as const;
// Integer bounds the grammar enforces (a range of at most 1000 values is generated as its values), in an array, nullable,
// behind $defs and definitions references, under a property named like a grammar rule.
const boundsSchema = {
  type: 'object',
  $defs: { small: { type: 'integer', minimum: -3, exclusiveMaximum: 4 } },
  definitions: { even: { type: 'integer', minimum: 0, maximum: 20, multipleOf: 2 } },
  properties: {
    xs: { type: 'array', items: { type: 'integer', minimum: 1, maximum: 5 }, maxItems: 4 },
    maybe: { type: ['integer', 'null'], minimum: 10, maximum: 12 },
    integer: { $ref: '#/$defs/small' },
    even: { $ref: '#/definitions/even' },
    pick: { enum: [1, 2.5, -300] },
    wide: { type: 'integer', minimum: -500, maximum: 499 },
  },
  required: ['xs', 'maybe', 'integer', 'even', 'pick', 'wide'],
  additionalProperties: false,
} as const;
// The same for zod's validator, which resolves only `#/$defs/` references.
const boundsCheck = JSON.parse(
  JSON.stringify({
    ...boundsSchema,
    definitions: undefined,
    $defs: { ...boundsSchema.$defs, ...boundsSchema.definitions },
  }).replaceAll('#/definitions/', '#/$defs/'),
) as object;
const oneInteger = {
  type: 'object',
  properties: { a: { type: 'integer' } },
  required: ['a'],
  additionalProperties: false,
} as const;

/** Every number in a parsed JSON value, however deep. */
const numbersIn = (v: unknown): number[] =>
  typeof v === 'number' ? [v] : v && typeof v === 'object' ? Object.values(v).flatMap(numbersIn) : [];

const validator = (schema: object) => z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
const validates = (schema: object, text: string) => validator(schema).safeParse(JSON.parse(text)).success;

const chatTools: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', description: 'current weather of a city', parameters: weatherParams },
  },
  { type: 'function', function: { name: 'get_time', description: 'time now', parameters: timeParams } },
];
const responseTools: OpenAI.Responses.FunctionTool[] = [
  {
    type: 'function',
    name: 'get_weather',
    description: 'current weather of a city',
    parameters: weatherParams,
    strict: true,
  },
  { type: 'function', name: 'get_time', description: 'time now', parameters: timeParams, strict: true },
];
const paramsOf: Record<string, object> = { get_weather: weatherParams, get_time: timeParams };

describe('llama-node engine: response_format and tools through a node', () => {
  const dir = tempDir('routerdesk-structured-');
  let node: TestNode;
  let openai: OpenAI;

  beforeAll(async () => {
    const weights = join(dir, 'tiny.gguf');
    await writeTinyLlamaGguf(weights, { embd: 64, layers: 2, type: 'f32', seed: 11, ctx: 2048 });
    node = await startNode({
      dir,
      models: {
        tiny: {
          name: 'tiny-chat',
          backend: 'llama-node',
          capabilities: ['text'],
          model: weights,
          contextsize: 2048,
          parallel: 1,
          llama_node: { threads: 1 },
        },
      },
    });
    openai = new OpenAI({ baseURL: `${node.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
  });
  afterAll(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a json_schema response_format with JSON that validates, on every seed tried', async () => {
    for (const seed of [1, 2, 3]) {
      const r = await openai.chat.completions.create({
        model: 'tiny-chat',
        seed,
        max_tokens: 300,
        messages: [{ role: 'user', content: 'a task please' }],
        response_format: { type: 'json_schema', json_schema: { name: 'task', schema: answerSchema, strict: true } },
      });
      expect(r.model).toBe('tiny-chat');
      expect(r.choices[0].finish_reason).toBe('stop');
      expect(validates(answerSchema, r.choices[0].message.content!), r.choices[0].message.content!).toBe(true);
    }
  });

  it('answers integer, number, enum, nested object and array schemas with JSON that validates, on every seed tried', async () => {
    for (const schema of [oneInteger, numbersSchema]) {
      for (const seed of [1, 2, 3, 4, 5]) {
        const r = await openai.chat.completions.create({
          model: 'tiny-chat',
          seed,
          max_tokens: 1200,
          messages: [{ role: 'user', content: 'numbers please' }],
          response_format: { type: 'json_schema', json_schema: { name: 'numbers', schema, strict: true } },
        });
        const text = r.choices[0].message.content!;
        expect(r.choices[0].finish_reason, text).toBe('stop');
        expect(validates(schema, text), text).toBe(true);
        expect(numbersIn(JSON.parse(text)).every(Number.isFinite), text).toBe(true);
      }
    }
  });

  it('answers integer bounds (in arrays, nullable, through $defs and definitions) with JSON that validates, on every seed tried', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const r = await openai.chat.completions.create({
        model: 'tiny-chat',
        seed,
        max_tokens: 600,
        messages: [{ role: 'user', content: 'numbers please' }],
        response_format: { type: 'json_schema', json_schema: { name: 'bounds', schema: boundsSchema, strict: true } },
      });
      const text = r.choices[0].message.content!;
      expect(r.choices[0].finish_reason, text).toBe('stop');
      expect(validates(boundsCheck, text), text).toBe(true);
    }
  });

  it('refuses, naming the keyword and where, a schema keyword the grammar cannot enforce', async () => {
    const cases: [object, string][] = [
      [
        {
          type: 'object',
          properties: { v: { type: 'array', items: { type: 'number', minimum: 0 } } },
          required: ['v'],
        },
        '/properties/v/items: minimum',
      ],
      [
        { type: 'object', properties: { n: { type: 'integer', minimum: 0 } }, required: ['n'] },
        '/properties/n: minimum',
      ],
      [
        { type: 'object', properties: { s: { type: 'string', pattern: '^a+$' } }, required: ['s'] },
        '/properties/s: pattern',
      ],
      [{ allOf: [{ type: 'integer' }] }, '/: allOf'],
      [{ type: 'array', items: { enum: [1, 2] }, uniqueItems: true }, '/: uniqueItems'],
    ];
    for (const [schema, where] of cases) {
      const err = await openai.chat.completions
        .create({
          model: 'tiny-chat',
          max_tokens: 50,
          messages: [{ role: 'user', content: 'x' }],
          response_format: {
            type: 'json_schema',
            json_schema: { name: 's', schema: schema as Record<string, unknown> },
          },
        })
        .catch((e: unknown) => e);
      expect(err, where).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as Error).message).toContain(where);
    }
  });

  it('answers /v1/completions with the json_object schema form of llama-server, JSON that validates', async () => {
    for (const seed of [1, 2, 3]) {
      const r = await fetch(`${node.url}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'tiny-chat',
          seed,
          max_tokens: 1200,
          prompt: '{"a":',
          response_format: { type: 'json_object', schema: numbersSchema },
        }),
      });
      const body = (await r.json()) as { choices: { text: string; finish_reason: string }[] };
      expect(r.status, JSON.stringify(body)).toBe(200);
      const { text, finish_reason } = body.choices[0];
      expect(finish_reason, text).toBe('stop');
      expect(validates(numbersSchema, text), text).toBe(true);
    }
  });

  it('calls the function tool_choice names, with arguments that validate (finish_reason tool_calls)', async () => {
    const r = await openai.chat.completions.create({
      model: 'tiny-chat',
      seed: 4,
      max_tokens: 300,
      messages: [{ role: 'user', content: 'weather in Oslo?' }],
      tools: chatTools,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    const choice = r.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(call.type).toBe('function');
    expect(call.id).toMatch(/^call_/);
    expect(call.function.name).toBe('get_weather');
    expect(validates(weatherParams, call.function.arguments), call.function.arguments).toBe(true);
  });

  it('streams a required call as a tool_calls delta whose arguments validate', async () => {
    const stream = await openai.chat.completions.create({
      model: 'tiny-chat',
      seed: 5,
      max_tokens: 300,
      stream: true,
      messages: [{ role: 'user', content: 'what now?' }],
      tools: chatTools,
      tool_choice: 'required',
    });
    const calls: { name?: string; arguments?: string }[] = [];
    let content = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      if (!c) continue;
      content += c.delta.content ?? '';
      for (const t of c.delta.tool_calls ?? [])
        calls.push({ name: t.function?.name, arguments: t.function?.arguments });
      finish = c.finish_reason ?? finish;
    }
    expect(finish).toBe('tool_calls');
    expect(content).toBe('');
    expect(calls).toHaveLength(1);
    expect(Object.keys(paramsOf)).toContain(calls[0].name);
    expect(validates(paramsOf[calls[0].name!], calls[0].arguments!)).toBe(true);
  });

  it('answers tool_choice auto with text or with calls whose arguments validate', async () => {
    const r = await openai.chat.completions.create({
      model: 'tiny-chat',
      seed: 6,
      max_tokens: 24,
      messages: [{ role: 'user', content: 'hello' }],
      tools: chatTools,
    });
    const choice = r.choices[0];
    if (choice.finish_reason === 'tool_calls') {
      for (const c of choice.message.tool_calls as OpenAI.Chat.ChatCompletionMessageFunctionToolCall[])
        expect(validates(paramsOf[c.function.name], c.function.arguments)).toBe(true);
    } else {
      expect(['stop', 'length']).toContain(choice.finish_reason);
      expect(typeof choice.message.content).toBe('string');
    }
  });

  it('answers responses.create with tools as a function_call item, and the next turn takes its output', async () => {
    const first = await openai.responses.create({
      model: 'tiny-chat',
      input: 'weather in Oslo?',
      tools: responseTools,
      tool_choice: 'required',
      max_output_tokens: 300,
    });
    expect(first.model).toBe('tiny-chat');
    expect(first.status).toBe('completed');
    expect(first.output).toHaveLength(1);
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call.type).toBe('function_call');
    expect(Object.keys(paramsOf)).toContain(call.name);
    expect(validates(paramsOf[call.name], call.arguments)).toBe(true);
    expect(first.usage!.output_tokens).toBeGreaterThan(0);

    const second = await openai.responses.create({
      model: 'tiny-chat',
      max_output_tokens: 8,
      tools: responseTools,
      tool_choice: 'none',
      input: [
        { role: 'user', content: 'weather in Oslo?' },
        call,
        { type: 'function_call_output', call_id: call.call_id, output: '3 degrees, rain' },
      ],
    });
    expect(second.output[0].type).toBe('message');
    // The call and its output reached the model: the prompt is longer than the question alone by both.
    const alone = await openai.responses.create({
      model: 'tiny-chat',
      max_output_tokens: 1,
      input: 'weather in Oslo?',
    });
    expect(second.usage!.input_tokens).toBeGreaterThan(alone.usage!.input_tokens + 10);
  });

  it('streams responses.create with tools: function_call item events, arguments that validate', async () => {
    const stream = await openai.responses.create({
      model: 'tiny-chat',
      input: 'time?',
      tools: responseTools,
      tool_choice: { type: 'function', name: 'get_time' },
      max_output_tokens: 300,
      stream: true,
    });
    const types: string[] = [];
    let args = '';
    let final: OpenAI.Responses.Response | undefined;
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'response.function_call_arguments.delta') args += e.delta;
      if (e.type === 'response.completed') final = e.response;
    }
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const item = final!.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(item).toMatchObject({ type: 'function_call', name: 'get_time', status: 'completed', arguments: args });
    expect(validates(timeParams, args)).toBe(true);
    expect(final!.usage!.output_tokens).toBeGreaterThan(0);
  });

  it('answers responses.create with a json_schema text.format as output_text that validates', async () => {
    const r = await openai.responses.create({
      model: 'tiny-chat',
      input: 'a task',
      max_output_tokens: 300,
      text: { format: { type: 'json_schema', name: 'task', schema: answerSchema, strict: true } },
    });
    expect(r.status).toBe('completed');
    expect(validates(answerSchema, r.output_text)).toBe(true);
  });

  it('refuses a tool_choice naming a function that is not in tools, naming tool_choice', async () => {
    const err = await openai.chat.completions
      .create({
        model: 'tiny-chat',
        messages: [{ role: 'user', content: 'x' }],
        tools: chatTools,
        tool_choice: { type: 'function', function: { name: 'nope' } },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('tool_choice');
  });
});

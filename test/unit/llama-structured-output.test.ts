import { describe, expect, it } from 'vitest';
import type { ChatTool } from '../../src-router/engines/llama-node/openai-requests';
import { chatRequestSchema } from '../../src-router/engines/llama-node/openai-requests';
import {
  callSchema,
  grammarSchema,
  MAX_INTEGER_VALUES,
  outputPlan,
  parseCall,
} from '../../src-router/engines/llama-node/structured-output';

const tool = (name: string, parameters?: Record<string, unknown>): ChatTool => ({
  type: 'function',
  function: { name, description: undefined, parameters },
});
const req = (extra: object) => chatRequestSchema.parse({ messages: [{ role: 'user', content: 'x' }], ...extra });
const schema: Record<string, unknown> = { type: 'object', properties: { a: { type: 'boolean' } }, required: ['a'] };

describe('llama-node output plan', () => {
  it('is free text without tools or a format, and for tool_choice none', () => {
    expect(outputPlan(req({}))).toEqual({ kind: 'free' });
    expect(outputPlan(req({ response_format: { type: 'text' } }))).toEqual({ kind: 'free' });
    expect(outputPlan(req({ tools: [tool('f')], tool_choice: 'none' }))).toEqual({ kind: 'free' });
  });

  it('is JSON for json_object (with llama-server’s optional schema) and json_schema', () => {
    expect(outputPlan(req({ response_format: { type: 'json_object' } }))).toEqual({ kind: 'json', schema: undefined });
    expect(outputPlan(req({ response_format: { type: 'json_object', schema } }))).toEqual({ kind: 'json', schema });
    expect(outputPlan(req({ response_format: { type: 'json_schema', json_schema: { name: 'n', schema } } }))).toEqual({
      kind: 'json',
      schema,
    });
  });

  it('forces a call for required (any tool) and a named function (that one); auto lets the model decide', () => {
    const tools = [tool('f'), tool('g')];
    expect(outputPlan(req({ tools, tool_choice: 'required' }))).toMatchObject({ kind: 'call', tools });
    expect(outputPlan(req({ tools, tool_choice: { type: 'function', function: { name: 'g' } } }))).toMatchObject({
      kind: 'call',
      tools: [tools[1]],
    });
    expect(outputPlan(req({ tools, parallel_tool_calls: false }))).toMatchObject({
      kind: 'functions',
      tools,
      parallel: false,
    });
    expect(() => outputPlan(req({ tools, response_format: { type: 'json_object' } }))).toThrow(/tool_choice "auto"/);
  });

  it('refuses a tool_choice without tools or naming an unknown function', () => {
    expect(
      chatRequestSchema.safeParse({ messages: [{ role: 'user', content: 'x' }], tool_choice: 'required' }).error
        ?.issues[0].path,
    ).toEqual(['tool_choice']);
    expect(
      chatRequestSchema.safeParse({
        messages: [{ role: 'user', content: 'x' }],
        tools: [tool('f')],
        tool_choice: { type: 'function', function: { name: 'h' } },
      }).error?.issues[0].message,
    ).toContain('not in tools');
  });
});

describe('llama-node call grammar', () => {
  it('describes one call object: the name as a constant, the arguments by the function’s parameters', () => {
    expect(callSchema([tool('f', schema)])).toEqual({
      type: 'object',
      properties: { name: { const: 'f' }, arguments: schema },
      required: ['name', 'arguments'],
    });
    expect(callSchema([tool('f'), tool('g', schema)])).toEqual({
      oneOf: [
        {
          type: 'object',
          properties: { name: { const: 'f' }, arguments: { type: 'object', properties: {} } },
          required: ['name', 'arguments'],
        },
        { type: 'object', properties: { name: { const: 'g' }, arguments: schema }, required: ['name', 'arguments'] },
      ],
    });
  });

  it('reads the generated call, arguments re-serialised; a call cut short is none', () => {
    expect(parseCall('{"name": "f", "arguments": {"a": true}}')).toMatchObject({
      id: expect.stringMatching(/^call_/),
      name: 'f',
      arguments: '{"a":true}',
    });
    expect(parseCall('{"name": "f", "argum')).toBeUndefined();
  });
});

describe('the schema node-llama-cpp makes the grammar from', () => {
  it('has oneOf for anyOf at any depth (same alternation), and keeps enum and const values as they are', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
        b: { type: 'array', items: { anyOf: [{ const: 1 }] } },
        c: { enum: [{ anyOf: 1 }] },
        d: { const: { anyOf: 2 } },
      },
      anyOf: [{ required: ['a'] }],
    };
    expect(grammarSchema(schema)).toEqual({
      type: 'object',
      properties: {
        a: { oneOf: [{ type: 'integer' }, { type: 'null' }] },
        b: { type: 'array', items: { oneOf: [{ const: 1 }] } },
        c: { enum: [{ anyOf: 1 }] },
        d: { const: { anyOf: 2 } },
      },
      oneOf: [{ required: ['a'] }],
    });
    expect(grammarSchema({ oneOf: [{ type: 'null' }], anyOf: [{ type: 'integer' }] })).toEqual({
      oneOf: [{ type: 'null' }],
      anyOf: [{ type: 'integer' }],
    });
    // A property or definition named anyOf is data: kept as it is named, its schema rewritten.
    expect(
      grammarSchema({
        type: 'object',
        properties: { anyOf: { anyOf: [{ type: 'null' }] } },
        $defs: { anyOf: { type: 'integer' } },
        required: ['anyOf'],
      }),
    ).toEqual({
      type: 'object',
      properties: { anyOf: { oneOf: [{ type: 'null' }] } },
      $defs: { anyOf: { type: 'integer' } },
      required: ['anyOf'],
    });
  });

  it('has a bounded integer as the enum of its values (multipleOf, exclusive bounds, nullable), and refuses what it cannot hold', () => {
    expect(grammarSchema({ type: 'integer', exclusiveMinimum: 0.5, maximum: 9, multipleOf: 3 })).toEqual({
      enum: [3, 6, 9],
    });
    expect(grammarSchema({ type: ['integer', 'null'], minimum: -1, maximum: 1 })).toEqual({ enum: [-1, 0, 1, null] });
    expect(() => grammarSchema({ type: 'integer', minimum: 0, maximum: 1000 })).toThrow(
      /at \/: minimum, maximum can only be enforced on an integer range of at most 1000/,
    );
    expect(() => grammarSchema({ type: 'integer', minimum: 5, maximum: 4 })).toThrow(/admit no integer/);
    expect(() => grammarSchema({ type: 'number', maximum: 4 })).toThrow(/at \/: maximum cannot be enforced/);
    // Listed values with bounds: only the ones within them.
    expect(grammarSchema({ type: 'integer', enum: [100, 3, 'x'], minimum: 0, maximum: 5 })).toEqual({
      type: 'integer',
      enum: [3, 'x'],
    });
    expect(grammarSchema({ const: 2.5, exclusiveMaximum: 3 })).toEqual({ enum: [2.5] });
    expect(() => grammarSchema({ const: 7, maximum: 3 })).toThrow(/admit none of the listed values/);
    expect(grammarSchema({ definitions: { n: { type: 'integer' } }, $ref: '#/definitions/n' })).toEqual({
      $defs: { n: { type: 'integer' } },
      $ref: '#/$defs/n',
    });
  });

  it("holds all of a schema's integer ranges to a total number of values, so the grammar stays small and quick to make", () => {
    const wide = (n: number) => ({
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: n }, (_, i) => [`p${i}`, { type: 'integer', minimum: 0, maximum: 999 }]),
      ),
    });
    expect(() => grammarSchema(wide(MAX_INTEGER_VALUES / 1000))).not.toThrow();
    expect(() => grammarSchema(wide(MAX_INTEGER_VALUES / 1000 + 1))).toThrow(
      /at \/properties\/p20: the schema's integer ranges hold more than 20000 values in all/,
    );
  });
});

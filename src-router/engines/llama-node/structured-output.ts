/**
 * `response_format` and `tools` / `tool_choice` on node-llama-cpp:
 * - `json_object` → the built-in JSON grammar; `json_schema` → a grammar made from the schema
 *   (`llama.createGrammarForJsonSchema`), so the answer parses and validates;
 * - `tool_choice: "required"` or a named function → a grammar for one call object `{"name", "arguments"}` whose
 *   arguments follow the function's parameter schema: a call with valid arguments from any model, even a random one;
 * - `tool_choice: "auto"` (the default with tools) → the chat wrapper's native function calling: the model decides
 *   whether to call, and a call's parameters are generated under the function's schema.
 */
import { randomUUID } from 'node:crypto';
import { boundJsonNumbers, boundSchemaNumbers } from './bounded-numbers';
import type { ChatModelFunctions, GbnfJsonSchema, Llama, LlamaGrammar } from './llama-api';
import { type ChatRequest, type ChatTool, EngineHttpError } from './openai-requests';

export type OutputPlan =
  | { kind: 'free' }
  | { kind: 'json'; schema?: GbnfJsonSchema }
  | { kind: 'call'; tools: ChatTool[] }
  | { kind: 'functions'; tools: ChatTool[]; parallel: boolean };

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text, as OpenAI sends it. */
  arguments: string;
}

/** What a chat request asks of the output. */
export function outputPlan(req: ChatRequest): OutputPlan {
  const tools = req.tools ?? [];
  const choice = req.tool_choice ?? 'auto';
  const format = req.response_format;
  if (tools.length && choice !== 'none') {
    if (choice === 'auto') {
      if (format && format.type !== 'text')
        throw new EngineHttpError(
          400,
          'response_format with tools and tool_choice "auto" is not supported: use tool_choice "required" or a named function, or drop one of them',
        );
      return { kind: 'functions', tools, parallel: req.parallel_tool_calls ?? true };
    }
    return {
      kind: 'call',
      tools: choice === 'required' ? tools : tools.filter((t) => t.function.name === choice.function.name),
    };
  }
  return formatPlan(format);
}

/** What `response_format` alone asks of the output (a completion has no tools). */
export function formatPlan(format: ChatRequest['response_format']): OutputPlan {
  if (!format || format.type === 'text') return { kind: 'free' };
  const schema = format.type === 'json_schema' ? format.json_schema.schema : format.schema;
  return { kind: 'json', schema: schema ?? undefined };
}

const params = (t: ChatTool): GbnfJsonSchema => t.function.parameters ?? { type: 'object', properties: {} };

/** The JSON Schema of one call object: one of the tools, by name, with its arguments. */
export function callSchema(tools: ChatTool[]): GbnfJsonSchema {
  const one = (t: ChatTool) => ({
    type: 'object',
    properties: { name: { const: t.function.name }, arguments: params(t) },
    required: ['name', 'arguments'],
  });
  return tools.length === 1 ? one(tools[0]) : { oneOf: tools.map(one) };
}

/** The system text that tells the model which functions it calls and how (the grammar makes sure it does). */
export function callInstructions(tools: ChatTool[]): string {
  const list = tools.map(
    (t) =>
      `- ${t.function.name}${t.function.description ? `: ${t.function.description}` : ''}\n  parameters: ${JSON.stringify(params(t))}`,
  );
  return `Call one of these functions. Answer with only a JSON object {"name": <function name>, "arguments": <object matching its parameters>}.\n${list.join('\n')}`;
}

export function nativeFunctions(tools: ChatTool[]): ChatModelFunctions {
  return Object.fromEntries(
    tools.map((t) => [
      t.function.name,
      { ...(t.function.description ? { description: t.function.description } : {}), params: params(t) },
    ]),
  );
}

/** Keywords whose value maps names (a property, a definition) to schemas: the names are data, never keywords. */
const SCHEMA_MAPS = new Set(['properties', '$defs', 'definitions', 'patternProperties']);

/** Keywords that constrain a value but that node-llama-cpp's grammar maker ignores: an answer could break them. */
const UNENFORCEABLE = [
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'pattern',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'propertyNames',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
];
const BOUND_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'];
/** The most values an integer range may have to be generated as the list of its values. */
export const MAX_INTEGER_RANGE = 1000;
/** The most values all of a schema's integer ranges may have together: bounds the grammar's size and build time. */
export const MAX_INTEGER_VALUES = 20_000;

/** The integers a bounded `integer` schema admits, or undefined when it is not bounded both ways within the limit. */
function integerRange(s: Record<string, unknown>): number[] | undefined {
  const num = (k: string) => (typeof s[k] === 'number' && Number.isFinite(s[k]) ? (s[k] as number) : undefined);
  const lows = [
    num('minimum') !== undefined ? Math.ceil(num('minimum')!) : undefined,
    num('exclusiveMinimum') !== undefined ? Math.floor(num('exclusiveMinimum')!) + 1 : undefined,
  ];
  const highs = [
    num('maximum') !== undefined ? Math.floor(num('maximum')!) : undefined,
    num('exclusiveMaximum') !== undefined ? Math.ceil(num('exclusiveMaximum')!) - 1 : undefined,
  ];
  const lo = Math.max(...lows.filter((v) => v !== undefined).concat(-Infinity));
  const hi = Math.min(...highs.filter((v) => v !== undefined).concat(Infinity));
  const step = s.multipleOf === undefined ? 1 : num('multipleOf');
  if (
    !Number.isSafeInteger(lo) ||
    !Number.isSafeInteger(hi) ||
    step === undefined ||
    step <= 0 ||
    hi - lo + 1 > MAX_INTEGER_RANGE
  )
    return undefined;
  const values: number[] = [];
  for (let v = lo; v <= hi; v++) if (Number.isInteger(v / step)) values.push(v);
  return values;
}

/** Whether a listed (`enum` / `const`) value keeps the numeric bounds of its schema; a value that is no number does. */
function withinBounds(v: unknown, s: Record<string, unknown>): boolean {
  if (typeof v !== 'number') return true;
  const n = (k: string) => (typeof s[k] === 'number' ? (s[k] as number) : undefined);
  const [min, max, xmin, xmax, step] = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'].map(
    n,
  );
  return (
    (min === undefined || v >= min) &&
    (max === undefined || v <= max) &&
    (xmin === undefined || v > xmin) &&
    (xmax === undefined || v < xmax) &&
    (step === undefined || Number.isInteger(v / step))
  );
}

/** A schema the built-in engine's grammar cannot hold an answer to: the client's 400, naming where and which keyword. */
export class UnenforceableSchemaError extends Error {}

const pointer = (path: string[]) => `/${path.join('/')}`;

/**
 * The schema as node-llama-cpp's grammar maker reads it, so that every answer it generates validates:
 * - `anyOf`, which it does not know (it would generate `null`), becomes `oneOf`, which it generates as the same alternation;
 * - `definitions` and `#/definitions/` references become `$defs` (it resolves only those);
 * - an `integer` bounded both ways with at most MAX_INTEGER_RANGE values becomes the enum of its values (or null),
 *   MAX_INTEGER_VALUES in all; an `enum` or `const` with bounds keeps the listed values within them;
 * - any other keyword it would ignore that constrains a value (`minimum`, `pattern`, `allOf`, `uniqueItems`, …) is an
 *   UnenforceableSchemaError; every other keyword is kept, at any depth.
 */
export function grammarSchema(schema: unknown, path: string[] = [], budget = { values: MAX_INTEGER_VALUES }): unknown {
  if (Array.isArray(schema)) return schema.map((s, i) => grammarSchema(s, [...path, String(i)], budget));
  if (!schema || typeof schema !== 'object') return schema;
  const s = schema as Record<string, unknown>;
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const bounded = BOUND_KEYWORDS.filter((k) => k in s);
  let rest: Record<string, unknown> = s;
  if (bounded.length && ('enum' in s || 'const' in s)) {
    // Listed values: the bounds only remove some of them.
    const listed = 'enum' in s ? (Array.isArray(s.enum) ? s.enum : []) : [s.const];
    rest = Object.fromEntries(Object.entries(s).filter(([k]) => k !== 'const' && !BOUND_KEYWORDS.includes(k)));
    rest.enum = listed.filter((v) => withinBounds(v, s));
    if ((rest.enum as unknown[]).length === 0)
      throw new UnenforceableSchemaError(`at ${pointer(path)}: ${bounded.join(', ')} admit none of the listed values`);
  } else if (bounded.length && types.includes('integer') && types.every((t) => t === 'integer' || t === 'null')) {
    const values = integerRange(s);
    if (!values)
      throw new UnenforceableSchemaError(
        `at ${pointer(path)}: ${bounded.join(', ')} can only be enforced on an integer range of at most ${MAX_INTEGER_RANGE} values`,
      );
    if (values.length === 0)
      throw new UnenforceableSchemaError(`at ${pointer(path)}: ${bounded.join(', ')} admit no integer`);
    budget.values -= values.length;
    if (budget.values < 0)
      throw new UnenforceableSchemaError(
        `at ${pointer(path)}: the schema's integer ranges hold more than ${MAX_INTEGER_VALUES} values in all`,
      );
    rest = Object.fromEntries(Object.entries(s).filter(([k]) => k !== 'type' && !BOUND_KEYWORDS.includes(k)));
    rest.enum = types.includes('null') ? [...values, null] : values;
  }
  const refused = UNENFORCEABLE.find((k) => k in rest);
  if (refused)
    throw new UnenforceableSchemaError(
      `at ${pointer(path)}: ${refused} cannot be enforced by the built-in engine's grammar`,
    );
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) {
    let key = k === 'anyOf' && !('oneOf' in rest) ? 'oneOf' : k;
    if (k === 'definitions') key = '$defs';
    if (k === 'enum' || k === 'const') out[key] = v;
    else if (k === '$ref' && typeof v === 'string')
      out[key] = v.startsWith('#/definitions/') ? `#/$defs/${v.slice('#/definitions/'.length)}` : v;
    else if (SCHEMA_MAPS.has(k) && v && typeof v === 'object' && !Array.isArray(v)) {
      const mapped = Object.fromEntries(
        Object.entries(v).map(([name, sub]) => [name, grammarSchema(sub, [...path, k, name], budget)]),
      );
      out[key] = key === '$defs' && out.$defs ? { ...(out.$defs as object), ...mapped } : mapped;
    } else out[key] = grammarSchema(v, [...path, k], budget);
  }
  return out;
}

/** node-llama-cpp's grammar with its number rules bounded (`rewrite`), the same triggers and trimming. */
async function bounded(llama: Llama, made: LlamaGrammar, rewrite: (gbnf: string) => string): Promise<LlamaGrammar> {
  return llama.createGrammar({
    grammar: rewrite(made.grammar),
    stopGenerationTriggers: made.stopGenerationTriggers,
    trimWhitespaceSuffix: made.trimWhitespaceSuffix,
  });
}

/**
 * The grammar a plan needs, if any, its numbers bounded so that a finished answer's integers are safe integers and
 * its numbers finite; a schema node-llama-cpp cannot turn into a grammar is the client's 400.
 */
export async function grammarFor(llama: Llama, plan: OutputPlan): Promise<LlamaGrammar | undefined> {
  try {
    if (plan.kind === 'json' && !plan.schema)
      return await bounded(llama, await llama.getGrammarFor('json'), boundJsonNumbers);
    const schema = plan.kind === 'json' ? plan.schema : plan.kind === 'call' ? callSchema(plan.tools) : undefined;
    if (schema)
      return await bounded(
        llama,
        await llama.createGrammarForJsonSchema(grammarSchema(schema) as GbnfJsonSchema),
        boundSchemaNumbers,
      );
    return undefined;
  } catch (err) {
    const where = plan.kind === 'call' ? "tools: a function's parameters" : 'response_format: the schema';
    throw new EngineHttpError(400, `${where} cannot be turned into a grammar: ${(err as Error).message}`);
  }
}

export const newCallId = () => `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`;

/** The call object generated under the call grammar; undefined when it was cut short (max_tokens) and does not parse. */
export function parseCall(text: string): ToolCall | undefined {
  try {
    const v = JSON.parse(text) as { name?: unknown; arguments?: unknown };
    if (typeof v.name !== 'string') return undefined;
    return { id: newCallId(), name: v.name, arguments: JSON.stringify(v.arguments ?? {}) };
  } catch {
    return undefined;
  }
}

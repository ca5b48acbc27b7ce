/** Ollama's wire format ↔ the OpenAI shapes the engines speak. Pure functions. */
import { MAX_TIMER_MS } from '../config/duration';
import { RouterError } from './errors';
import {
  type EngineTimings,
  type OpenAIAnswer,
  type OpenAIToolCall,
  openAIAnswerSchema,
  openAIEmbeddingAnswerSchema,
  parseAnswer,
} from './openai-answers';

type Json = Record<string, unknown>;

interface OllamaToolCall {
  function?: { name?: string; arguments?: unknown };
}

interface OllamaMessage {
  role: string;
  content?: string;
  images?: string[];
  tool_calls?: OllamaToolCall[];
  tool_name?: string;
}

const badRequest = (param: string, message: string) =>
  new RouterError(400, 'invalid_request', `${param}: ${message}`, 'invalid_request_error', param);

/** Ollama `options` → OpenAI sampling fields (llama-server and vLLM also read `top_k`, `min_p`, `repeat_penalty`). */
function sampling(options: unknown): Json {
  const o = (options ?? {}) as Json;
  const out: Json = {};
  // num_predict -1 (no limit) and -2 (fill the context) leave the engine's own limit.
  if (typeof o.num_predict === 'number' && o.num_predict > 0) out.max_tokens = o.num_predict;
  for (const k of [
    'temperature',
    'top_p',
    'top_k',
    'min_p',
    'seed',
    'stop',
    'presence_penalty',
    'frequency_penalty',
    'repeat_penalty',
  ] as const)
    if (o[k] !== undefined) out[k] = o[k];
  return out;
}

/** `format: "json"` → `json_object`; a JSON schema → `json_schema`. */
function responseFormat(format: unknown): Json {
  if (format === undefined || format === null || format === '') return {};
  if (format === 'json') return { response_format: { type: 'json_object' } };
  if (typeof format === 'object' && !Array.isArray(format))
    return {
      response_format: { type: 'json_schema', json_schema: { name: 'response', schema: format, strict: true } },
    };
  throw badRequest('format', `expected "json" or a JSON schema object, got ${JSON.stringify(format)}`);
}

/**
 * `options.num_ctx` against the window the engine was started with (`contextsize`): an engine's window is fixed when
 * it starts, so a request may ask for at most that window; more is refused rather than silently cut.
 */
export function checkNumCtx(options: unknown, model: string, window: number | null): void {
  const n = (options as Json | undefined)?.num_ctx;
  if (n === undefined) return;
  if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0)
    throw badRequest('options.num_ctx', `must be a positive integer, got ${JSON.stringify(n)}`);
  if (window !== null && n > window) {
    throw badRequest(
      'options.num_ctx',
      `${n} is more than the context window of model '${model}' (${window} tokens, its config's contextsize); set contextsize in the model config to serve a larger window`,
    );
  }
}

/** An Ollama `images` list becomes image_url content parts (base64 data URLs), so guardians and engines see structure, not text. */
function messageToOpenAI(m: OllamaMessage, i: number): Json {
  const extra: Json = {};
  if (m.tool_calls?.length) {
    extra.tool_calls = m.tool_calls.map((c, j) => ({
      id: `call_${i}_${j}`,
      type: 'function',
      function: {
        name: c.function?.name ?? '',
        arguments:
          typeof c.function?.arguments === 'string'
            ? c.function.arguments
            : JSON.stringify(c.function?.arguments ?? {}),
      },
    }));
  }
  if (m.role === 'tool' && m.tool_name) extra.name = m.tool_name;
  if (!m.images?.length) return { role: m.role, content: m.content ?? '', ...extra };
  const parts: Json[] = [];
  if (m.content) parts.push({ type: 'text', text: m.content });
  for (const img of m.images)
    parts.push({
      type: 'image_url',
      image_url: { url: img.startsWith('data:') ? img : `data:image/png;base64,${img}` },
    });
  return { role: m.role, content: parts, ...extra };
}

/** Fields common to chat and generate: streaming (with usage on the last chunk), sampling, response format. */
function common(body: Json): Json {
  const stream = body.stream !== false;
  return {
    model: body.model,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
    ...sampling(body.options),
    ...responseFormat(body.format),
  };
}

export function ollamaChatToOpenAI(body: Json): Json {
  const messages = ((body.messages ?? []) as OllamaMessage[]).map(messageToOpenAI);
  const tools = Array.isArray(body.tools) && body.tools.length ? { tools: body.tools } : {};
  return { ...common(body), messages, ...tools };
}

export function ollamaGenerateToOpenAI(body: Json): Json {
  const prompt =
    typeof body.system === 'string' && body.system ? `${body.system}\n\n${body.prompt ?? ''}` : (body.prompt ?? '');
  return { ...common(body), prompt };
}

/** A generate with an `images` list: run as a chat (completions carry no images), so guardians and engines see image parts. */
export const generateCarriesImages = (body: Json) => Array.isArray(body.images) && body.images.length > 0;

export function ollamaGenerateAsChat(body: Json): Json {
  const system = typeof body.system === 'string' && body.system ? [{ role: 'system', content: body.system }] : [];
  return ollamaChatToOpenAI({
    ...body,
    messages: [...system, { role: 'user', content: body.prompt ?? '', images: body.images }],
  });
}

export function ollamaEmbedToOpenAI(body: Json): Json {
  return { model: body.model, input: body.input ?? body.prompt ?? '' };
}

/** A chat with no messages, or a generate with no prompt: Ollama's "load the model" (or, with keep_alive 0, "unload") call. */
export function isLoadCall(kind: 'chat' | 'generate', body: Json): boolean {
  if (kind === 'chat') return !Array.isArray(body.messages) || body.messages.length === 0;
  return (body.prompt === undefined || body.prompt === '') && !(Array.isArray(body.images) && body.images.length);
}

const GO_UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Ollama's `keep_alive`: a number of seconds or a Go duration (`5m`, `1h30m`, `300ms`), as a string or number; a
 * negative value keeps the model loaded (null); absent: undefined (the model config's `ttl`). Milliseconds.
 */
export function parseKeepAlive(value: unknown): number | null | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  let ms: number | undefined;
  if (typeof value === 'number' && Number.isFinite(value)) ms = value * 1000;
  else if (typeof value === 'string') {
    const s = value.trim();
    if (/^[-+]?\d+(\.\d+)?$/.test(s)) ms = Number(s) * 1000;
    else {
      const m = /^([-+]?)((?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+)$/.exec(s);
      if (m) {
        ms = 0;
        for (const [, n, unit] of m[2].matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g))
          ms += Number(n) * GO_UNIT_MS[unit];
        if (m[1] === '-') ms = -ms;
      }
    }
  }
  if (ms === undefined)
    throw badRequest(
      'keep_alive',
      `not a duration: ${JSON.stringify(value)} (write e.g. "5m", "1h", "30s", 0 to unload after the request, or -1 to stay loaded)`,
    );
  if (ms < 0) return null;
  if (ms > MAX_TIMER_MS)
    throw badRequest('keep_alive', `too long: ${JSON.stringify(value)} (at most 24d, or -1 to stay loaded)`);
  return Math.round(ms);
}

const nowIso = () => new Date().toISOString();

/** How a request's time is measured: its arrival (performance.now()), and how long it waited for its model to load. */
export interface OllamaClock {
  startedAt: number;
  /** Milliseconds of this request's life spent waiting for its model's engine to load (0: it was loaded). */
  loadMs(): number;
  now?(): number;
}

const ns = (ms: number) => Math.max(0, Math.round(ms * 1e6));
const finiteMs = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

/**
 * Ollama's durations in nanoseconds. The engine's own `timings` (llama-server, the sim, the built-in engine) give
 * prompt and generation time; an engine without them gets what the router measured around it. Each part lies within
 * the request's wall time, so none exceeds `total_duration`, nor do they add up beyond it.
 */
export function ollamaDurations(
  clock: OllamaClock,
  engine: EngineTimings | undefined,
  measured: { promptMs: number; evalMs: number },
) {
  const totalMs = (clock.now ?? performance.now.bind(performance))() - clock.startedAt;
  const loadMs = Math.min(clock.loadMs(), totalMs);
  const promptMs = Math.min(finiteMs(engine?.prompt_ms) ?? measured.promptMs, totalMs - loadMs);
  const evalMs = Math.min(finiteMs(engine?.predicted_ms) ?? measured.evalMs, totalMs - loadMs - promptMs);
  return {
    total_duration: ns(totalMs),
    load_duration: ns(loadMs),
    prompt_eval_duration: ns(promptMs),
    eval_duration: ns(evalMs),
  };
}

function doneFields(
  finishReason: string | null | undefined,
  body: Pick<OpenAIAnswer, 'usage' | 'timings'>,
  durations: ReturnType<typeof ollamaDurations>,
) {
  return {
    done: true,
    done_reason: finishReason === 'length' ? 'length' : 'stop',
    ...durations,
    prompt_eval_count: body.usage?.prompt_tokens ?? body.timings?.prompt_n ?? 0,
    eval_count: body.usage?.completion_tokens ?? body.timings?.predicted_n ?? 0,
  };
}

function parseArguments(args: string | null | undefined): unknown {
  if (!args) return {};
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

const toolCallsToOllama = (calls: OpenAIToolCall[] | null | undefined) =>
  calls?.length
    ? {
        tool_calls: calls.map((c) => ({
          function: { name: c.function?.name ?? '', arguments: parseArguments(c.function?.arguments) },
        })),
      }
    : {};

/** A non-streamed answer: no first token to time, so without engine timings the generation is all of it after the load. */
function measuredWhole(clock: OllamaClock) {
  const totalMs = (clock.now ?? performance.now.bind(performance))() - clock.startedAt;
  return { promptMs: 0, evalMs: totalMs - clock.loadMs() };
}

export function openAIChatToOllama(answer: unknown, model: string, clock: OllamaClock): Json {
  const body = parseAnswer(openAIAnswerSchema, answer, model);
  const choice = body.choices?.[0];
  const message = {
    role: 'assistant',
    content: choice?.message?.content ?? '',
    ...toolCallsToOllama(choice?.message?.tool_calls),
  };
  return {
    model,
    created_at: nowIso(),
    message,
    ...doneFields(choice?.finish_reason, body, ollamaDurations(clock, body.timings, measuredWhole(clock))),
  };
}

export function openAICompletionToOllama(answer: unknown, model: string, clock: OllamaClock): Json {
  const body = parseAnswer(openAIAnswerSchema, answer, model);
  const choice = body.choices?.[0];
  // A generate with images ran as a chat: its text is the message's.
  return {
    model,
    created_at: nowIso(),
    response: choice?.text ?? choice?.message?.content ?? '',
    ...doneFields(choice?.finish_reason, body, ollamaDurations(clock, body.timings, measuredWhole(clock))),
  };
}

/** The answer to a load or unload call (no prompt, no messages): Ollama's shape, `done_reason` `load` or `unload`. */
export function loadCallAnswer(
  kind: 'chat' | 'generate',
  model: string,
  reason: 'load' | 'unload',
  clock: OllamaClock,
): Json {
  const durations = ollamaDurations(clock, undefined, { promptMs: 0, evalMs: 0 });
  const base = {
    model,
    created_at: nowIso(),
    done: true,
    done_reason: reason,
    total_duration: durations.total_duration,
    load_duration: durations.load_duration,
  };
  return kind === 'chat' ? { ...base, message: { role: 'assistant', content: '' } } : { ...base, response: '' };
}

/**
 * Turns a stream of OpenAI chunks into Ollama NDJSON objects: one per chunk that carries text, the tool calls once
 * complete, then a final `done` object with the counts (the usage chunk, else the engine's timings) and durations.
 */
export async function* openAIStreamToOllama(
  events: AsyncIterable<unknown>,
  kind: 'chat' | 'generate',
  model: string,
  clock: OllamaClock,
): AsyncGenerator<Json> {
  const now = clock.now ?? performance.now.bind(performance);
  const opened = now();
  let firstTokenAt: number | undefined;
  let finish: string | null | undefined;
  const last: Pick<OpenAIAnswer, 'usage' | 'timings'> = {};
  let count = 0;
  const calls = new Map<number, { name: string; arguments: string }>();
  for await (const e of events) {
    const chunk = parseAnswer(openAIAnswerSchema, e, model);
    if (chunk.usage) last.usage = chunk.usage;
    if (chunk.timings) last.timings = chunk.timings;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    if (choice.finish_reason) finish = choice.finish_reason;
    for (const d of choice.delta?.tool_calls ?? []) {
      const c = calls.get(d.index ?? 0) ?? { name: '', arguments: '' };
      c.name += d.function?.name ?? '';
      c.arguments += d.function?.arguments ?? '';
      calls.set(d.index ?? 0, c);
    }
    // A generate with images ran as a chat: its chunks carry deltas.
    const text = kind === 'chat' ? choice.delta?.content : (choice.text ?? choice.delta?.content);
    if (!text) continue;
    firstTokenAt ??= now();
    count++;
    yield kind === 'chat'
      ? { model, created_at: nowIso(), message: { role: 'assistant', content: text }, done: false }
      : { model, created_at: nowIso(), response: text, done: false };
  }
  if (calls.size)
    yield {
      model,
      created_at: nowIso(),
      message: {
        role: 'assistant',
        content: '',
        ...toolCallsToOllama([...calls.values()].map((f) => ({ function: f }))),
      },
      done: false,
    };
  const ended = now();
  const first = firstTokenAt ?? ended;
  const durations = ollamaDurations(clock, last.timings, { promptMs: first - opened, evalMs: ended - first });
  const done = doneFields(
    finish,
    {
      ...last,
      usage: {
        prompt_tokens: last.usage?.prompt_tokens,
        completion_tokens: last.usage?.completion_tokens ?? last.timings?.predicted_n ?? count,
      },
    },
    durations,
  );
  yield kind === 'chat'
    ? { model, created_at: nowIso(), message: { role: 'assistant', content: '' }, ...done }
    : { model, created_at: nowIso(), response: '', ...done };
}

export function openAIEmbeddingsToOllama(answer: unknown, model: string, clock: OllamaClock): Json {
  const body = parseAnswer(openAIEmbeddingAnswerSchema, answer, model);
  const durations = ollamaDurations(clock, undefined, { promptMs: 0, evalMs: 0 });
  return {
    model,
    embeddings: body.data.map((d) => d.embedding),
    total_duration: durations.total_duration,
    load_duration: durations.load_duration,
    prompt_eval_count: body.usage?.prompt_tokens ?? 0,
  };
}

/** Ollama's wire format ↔ the OpenAI shapes the engines speak. Pure functions. */

type Json = Record<string, unknown>;

interface OllamaMessage {
  role: string;
  content?: string;
  images?: string[];
}

/** Ollama `options` → OpenAI sampling fields. */
function sampling(options: unknown): Json {
  const o = (options ?? {}) as Json;
  const out: Json = {};
  if (typeof o.num_predict === 'number' && o.num_predict > 0) out.max_tokens = o.num_predict;
  for (const k of ['temperature', 'top_p', 'seed', 'stop', 'presence_penalty', 'frequency_penalty'] as const) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

/** An Ollama `images` list becomes image_url content parts (base64 data URLs), so guardians and engines see structure, not text. */
function messageToOpenAI(m: OllamaMessage): Json {
  if (!m.images?.length) return { role: m.role, content: m.content ?? '' };
  const parts: Json[] = [];
  if (m.content) parts.push({ type: 'text', text: m.content });
  for (const img of m.images) parts.push({ type: 'image_url', image_url: { url: img.startsWith('data:') ? img : `data:image/png;base64,${img}` } });
  return { role: m.role, content: parts };
}

export function ollamaChatToOpenAI(body: Json): Json {
  const messages = (body.messages as OllamaMessage[]).map(messageToOpenAI);
  return { model: body.model, messages, stream: body.stream !== false, ...sampling(body.options) };
}

export function ollamaGenerateToOpenAI(body: Json): Json {
  const prompt = typeof body.system === 'string' && body.system ? `${body.system}\n\n${body.prompt ?? ''}` : (body.prompt ?? '');
  return { model: body.model, prompt, stream: body.stream !== false, ...sampling(body.options) };
}

export function ollamaEmbedToOpenAI(body: Json): Json {
  return { model: body.model, input: body.input ?? body.prompt ?? '' };
}

const nowIso = () => new Date().toISOString();

interface OpenAIChoice {
  message?: { content?: string | null; role?: string };
  delta?: { content?: string | null };
  text?: string;
  finish_reason?: string | null;
}
interface OpenAIBody {
  choices?: OpenAIChoice[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

function doneFields(finishReason: string | null | undefined, usage: OpenAIBody['usage'], startedAt: number) {
  return {
    done: true,
    done_reason: finishReason === 'length' ? 'length' : 'stop',
    total_duration: Math.round((performance.now() - startedAt) * 1e6),
    load_duration: 0,
    prompt_eval_count: usage?.prompt_tokens ?? 0,
    prompt_eval_duration: 0,
    eval_count: usage?.completion_tokens ?? 0,
    eval_duration: 0,
  };
}

export function openAIChatToOllama(body: OpenAIBody, model: string, startedAt: number): Json {
  const choice = body.choices?.[0];
  return { model, created_at: nowIso(), message: { role: 'assistant', content: choice?.message?.content ?? '' }, ...doneFields(choice?.finish_reason, body.usage, startedAt) };
}

export function openAICompletionToOllama(body: OpenAIBody, model: string, startedAt: number): Json {
  const choice = body.choices?.[0];
  return { model, created_at: nowIso(), response: choice?.text ?? '', ...doneFields(choice?.finish_reason, body.usage, startedAt) };
}

/**
 * Turns a stream of OpenAI chunks into Ollama NDJSON objects: one per chunk that carries text, then a final `done` object.
 */
export async function* openAIStreamToOllama(events: AsyncIterable<unknown>, kind: 'chat' | 'generate', model: string, startedAt: number): AsyncGenerator<Json> {
  let finish: string | null | undefined;
  let usage: OpenAIBody['usage'];
  let count = 0;
  for await (const e of events) {
    const chunk = e as OpenAIBody;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    if (choice.finish_reason) finish = choice.finish_reason;
    const text = kind === 'chat' ? choice.delta?.content : choice.text;
    if (!text) continue;
    count++;
    yield kind === 'chat'
      ? { model, created_at: nowIso(), message: { role: 'assistant', content: text }, done: false }
      : { model, created_at: nowIso(), response: text, done: false };
  }
  const done = doneFields(finish, { prompt_tokens: usage?.prompt_tokens, completion_tokens: usage?.completion_tokens ?? count }, startedAt);
  yield kind === 'chat' ? { model, created_at: nowIso(), message: { role: 'assistant', content: '' }, ...done } : { model, created_at: nowIso(), response: '', ...done };
}

export function openAIEmbeddingsToOllama(body: { data?: { embedding: number[] }[]; usage?: { prompt_tokens?: number } }, model: string, startedAt: number): Json {
  return {
    model,
    embeddings: (body.data ?? []).map((d) => d.embedding),
    total_duration: Math.round((performance.now() - startedAt) * 1e6),
    load_duration: 0,
    prompt_eval_count: body.usage?.prompt_tokens ?? 0,
  };
}

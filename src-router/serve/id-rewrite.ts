/** ID-3: the engine knows a model by its local ID; clients see the public ID. */
import { AnswerTooLarge, SSE_EVENT_LIMIT, START_CHARS } from '../backends/answer-limits';

/** Where the one model key of a JSON text names its model: the key at `at`, the name's text from `from` to `to`. */
export interface ModelKey {
  at: number;
  from: number;
  to: number;
  /** The name, decoded. */
  name: string;
}

/**
 * The one `"model"` key of a JSON text, written compactly (`"model":"…"`): where its name is, and the name. Null
 * when the text has none, more than one `"model"` (a second key, or a value), or a spaced one. Exact for JSON
 * without parsing: inside a string every `"` is escaped, so `"model"` stands only for a key or a whole value
 * (answers and request bodies pass on as the bytes they came in, renamed in place).
 */
export function modelKey(text: string): ModelKey | null {
  const at = text.indexOf('"model"');
  // An escaped quote before it makes it the end of another string (a key like `x\"model`), not a key of its own.
  if (at < 0 || text.indexOf('"model"', at + 7) >= 0 || !text.startsWith('":"', at + 6) || escapedAt(text, at))
    return null;
  const from = at + 9;
  const to = closingQuote(text, from);
  if (to < 0) return null;
  const raw = text.slice(from, to);
  if (!raw.includes('\\')) return { at, from, to, name: raw };
  try {
    return { at, from, to, name: JSON.parse(`"${raw}"`) as string };
  } catch {
    return null; // not JSON: the parsing path says what it is
  }
}

/** Where the JSON string whose body starts at `from` ends: its first quote not escaped; -1 when there is none. */
export function closingQuote(text: string, from: number): number {
  let to = text.indexOf('"', from);
  while (to >= 0 && escapedAt(text, to)) to = text.indexOf('"', to + 1);
  return to;
}

/** Whether the character at `at` follows an odd run of backslashes (it is escaped). */
export function escapedAt(text: string, at: number): boolean {
  let n = 0;
  while (at - 1 - n >= 0 && text.charCodeAt(at - 1 - n) === 92 /* \ */) n++;
  return n % 2 === 1;
}

/** `text` with the name at its model key (`from` to `to`, inside its quotes) replaced by `name`. */
export function withModelName(text: string, key: Pick<ModelKey, 'from' | 'to'>, name: string): string {
  return `${text.slice(0, key.from)}${JSON.stringify(name).slice(1, -1)}${text.slice(key.to)}`;
}

/** How many objects and arrays are open at `at` in a JSON text (outside strings): 1 for a key of the top-level object. */
export function depthAt(text: string, at: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < at; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* backslash */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) depth++;
    else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return depth;
}

/**
 * A request body as the client sent it (`raw`, whose parse is `json`) for an upstream that knows the model as
 * `model`: the same bytes, the name renamed in place, when its one model key is the top-level one with the name the
 * client gave; undefined when the body must be serialised again.
 */
export function rawWithModel(raw: string, json: { model?: unknown }, model: string): string | undefined {
  const key = topModelKey(raw, json.model);
  if (!key) return undefined;
  return key.name === model ? raw : withModelName(raw, key, model);
}

/**
 * The one model key of a JSON text whose parse has `name` as its top-level `model`: that key, when the text's one
 * compact `"model"` key is it. The top-level key is there, so a lone literal `"model"` is it unless the top-level one
 * is spelt with `\u` escapes (then the lone literal may be nested): only then is its depth walked, not the whole
 * body of every request.
 */
export function topModelKey(text: string, name: unknown): ModelKey | null {
  const key = modelKey(text);
  if (!key || key.name !== name) return null;
  return text.includes('\\u') && depthAt(text, key.at) !== 1 ? null : key;
}

/** Rewrites the `model` field of a response object (and of each item in `data` lists) from local to public. */
export function rewriteResponseModel(value: unknown, localId: string, publicId: string): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const obj = value as Record<string, unknown>;
  return typeof obj.model === 'string' && namesLocal(obj.model, localId, publicId) ? { ...obj, model: publicId } : obj;
}

/** Whether an answer's model name stands for the local ID (exactly, or a path ending in it), to be shown as the public one. */
export function namesLocal(name: string, localId: string, publicId: string): boolean {
  return name === localId || (name.length > 0 && localId !== publicId && name.endsWith(`/${localId}`));
}

/**
 * Splits a byte stream of server-sent events into the JSON payload of each `data:` line, in order, as they arrive.
 * Yields `'[DONE]'` for the terminator; lines that are not JSON are yielded as raw strings.
 */
export async function* sseEvents(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<unknown> {
  for await (const batch of sseDataBatches(chunks)) for (const data of batch) yield parseData(data);
}

/**
 * The `data:` payloads as received, in batches: every one that one chunk of the stream completed, together (what
 * arrived together is relayed in one write, and costs one turn of the relay, not one per event).
 */
export async function* sseDataBatches(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<string[]> {
  const split = new SseDataSplitter();
  for await (const chunk of chunks) {
    const batch = split.push(chunk);
    if (batch.length) yield batch;
  }
  const last = split.end();
  if (last.length) yield last;
}

/**
 * Splits a byte stream of server-sent events into `data:` payloads, synchronously, chunk by chunk: `push` answers the
 * payloads a chunk completed (none when it ended mid-line), `end` the last line if the stream ended without a newline.
 * A relay calls it inside its own loop (one async step per chunk fewer than a generator in between).
 * Each chunk is scanned once: a line still open keeps its pieces until its newline arrives, never scanned again. A
 * line longer than `limit` characters throws `AnswerTooLarge` (a stream that never sends a newline cannot grow the
 * relay's memory).
 */
export class SseDataSplitter {
  private readonly decoder = new TextDecoder();
  /** The open line's pieces (no newline in any) and their length. */
  private open: string[] = [];
  private openLength = 0;

  constructor(private readonly limit = SSE_EVENT_LIMIT) {}

  push(chunk: Uint8Array | string): string[] {
    const text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    let nl = text.indexOf('\n');
    if (nl < 0) {
      this.keep(text);
      return NONE;
    }
    const batch: string[] = [];
    this.line(batch, this.openLength ? this.joined(text.slice(0, nl)) : text.slice(0, nl));
    let from = nl + 1;
    while ((nl = text.indexOf('\n', from)) >= 0) {
      this.line(batch, text.slice(from, nl));
      from = nl + 1;
    }
    this.keep(text.slice(from));
    return batch;
  }

  end(): string[] {
    const data = dataOf(this.joined(this.decoder.decode()).trim());
    return data === undefined ? [] : [data];
  }

  /** Text with no newline: the open line goes on, within the bound. */
  private keep(text: string): void {
    if (!text) return;
    if (this.openLength + text.length > this.limit) throw this.tooLong(text);
    this.open.push(text);
    this.openLength += text.length;
  }

  /** The open line with `tail`, as one string; no line is open after. */
  private joined(tail: string): string {
    const line = this.open.length ? this.open.join('') + tail : tail;
    this.open = [];
    this.openLength = 0;
    return line;
  }

  private line(batch: string[], line: string): void {
    if (line.length > this.limit) throw this.tooLong(line);
    const data = dataOf(line);
    if (data !== undefined) batch.push(data);
  }

  private tooLong(text: string): AnswerTooLarge {
    const start = (this.open[0] ?? text).slice(0, START_CHARS);
    this.open = [];
    this.openLength = 0;
    return new AnswerTooLarge(this.limit, start, 'an SSE line');
  }
}

/** No payloads (a chunk that ended mid-line): one shared empty batch. */
const NONE: string[] = [];

const dataOf = (line: string): string | undefined => (line.startsWith('data:') ? line.slice(5).trim() : undefined);

/** A `data:` payload: `'[DONE]'`, the parsed JSON, or the text itself when it is not JSON. */
export function parseData(data: string): unknown {
  if (data === '[DONE]') return '[DONE]';
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

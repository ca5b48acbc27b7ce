import type { HttpAnswer } from './http-call';

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * The most of one answer a node reads whole from an engine, a static-route endpoint or another node (a JSON answer,
 * a lent request's answer relayed between nodes): a batch of embeddings or a few images fit many times over.
 */
export const ANSWER_LIMIT = 256 * MiB;

/** The most of a status view a node reads from another node or an engine (snapshots, lanes, decision pages, metrics). */
export const VIEW_LIMIT = 32 * MiB;

/** The most of an error answer's body read for its message; past it the answer is cut off. */
export const ERROR_BODY_LIMIT = 64 * KiB;

/**
 * The longest line of an SSE stream, in characters: one event's `data:` (a chunk of a few tokens, or a final event
 * carrying a whole answer's text or usage) fits many times over; a stream that sends more without a newline is cut off.
 */
export const SSE_EVENT_LIMIT = 16 * MiB;

/** A size in the unit it is a whole number of. */
export function sizeText(bytes: number): string {
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes >= KiB && bytes % KiB === 0) return `${bytes / KiB} KiB`;
  return `${bytes} bytes`;
}

/** An answer, or one SSE line of it, past its bound: nothing more of it was read and its connection was closed. */
export class AnswerTooLarge extends Error {
  readonly code = 'answer_too_large';

  /** `start`: the first characters of what was read, for the message an operator reads. */
  constructor(
    readonly limit: number,
    readonly start: string,
    what = 'an answer',
  ) {
    super(`sent ${what} over ${sizeText(limit)}; the rest was not read`);
    this.name = 'AnswerTooLarge';
  }
}

/** How much of an oversized answer's start goes into messages. */
export const START_CHARS = 200;

/**
 * Reads a body (chunks of bytes) to its end as UTF-8 text, at most `limit` bytes: past it the read stops — the body's
 * iterator is returned, which closes its connection — and it rejects with `AnswerTooLarge`.
 */
export async function readCapped(body: AsyncIterable<Uint8Array> | null, limit: number): Promise<string> {
  if (!body) return '';
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    parts.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    if (size > limit) throw new AnswerTooLarge(limit, startOf(parts));
  }
  return Buffer.concat(parts, size).toString('utf8');
}

/** The first characters of what was read (its first pieces, not all of it joined). */
export function startOf(parts: readonly Uint8Array[]): string {
  const head: Uint8Array[] = [];
  let n = 0;
  for (const p of parts) {
    if (n >= START_CHARS * 4) break;
    head.push(p.subarray(0, START_CHARS * 4));
    n += head[head.length - 1].byteLength;
  }
  return Buffer.concat(head).toString('utf8').slice(0, START_CHARS);
}

/** A WHATWG `fetch` answer (an upload's, a call to another node's API) read as the request path reads its own: bounded. */
export function fetchAnswer(res: Response): HttpAnswer {
  const body = res.body as unknown as AsyncIterable<Uint8Array> | null;
  let taken = false;
  const take = () => {
    if (taken) throw new TypeError('body already read');
    taken = true;
    return body;
  };
  const text = (limit = ANSWER_LIMIT) => readCapped(take(), limit);
  return {
    status: res.status,
    ok: res.ok,
    statusText: res.statusText,
    headers: res.headers,
    body,
    text,
    json: async (limit = ANSWER_LIMIT) => JSON.parse(await text(limit)) as unknown,
  };
}

/**
 * An error answer's body, read for its message: at most `ERROR_BODY_LIMIT` bytes; one past it gives its start, said to
 * be cut off (its connection closed), and one that cannot be read gives ''. Never rejects.
 */
export async function errorText(res: Pick<HttpAnswer, 'text'>): Promise<string> {
  try {
    return await res.text(ERROR_BODY_LIMIT);
  } catch (err) {
    return err instanceof AnswerTooLarge ? `${err.start}… (an error body over ${sizeText(err.limit)}, cut off)` : '';
  }
}

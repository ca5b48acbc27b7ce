/** ID-3: the engine knows a model by its local ID; clients see the public ID. */

/** Sets `model` to the given ID on an object body (a copy). */
export function withModel<T extends Record<string, unknown>>(body: T, model: string): T {
  return { ...body, model };
}

/** Rewrites the `model` field of a response object (and of each item in `data` lists) from local to public. */
export function rewriteResponseModel(value: unknown, localId: string, publicId: string): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const obj = value as Record<string, unknown>;
  if (obj.model === localId || (typeof obj.model === 'string' && obj.model.length > 0 && localId !== publicId && obj.model.endsWith(`/${localId}`))) {
    return { ...obj, model: publicId };
  }
  return obj;
}

/**
 * Splits a byte stream of server-sent events into the JSON payload of each `data:` line, in order, as they arrive.
 * Yields `'[DONE]'` for the terminator; lines that are not JSON are yielded as raw strings.
 */
export async function* sseEvents(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<unknown> {
  for await (const batch of sseDataBatches(chunks)) for (const data of batch) yield parseData(data);
}

/**
 * The `data:` payloads as received, in batches: every one that one chunk of the stream completed, together (issue
 * #14: what arrived together is relayed in one write, and costs one turn of the relay, not one per event).
 */
export async function* sseDataBatches(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<string[]> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of chunks) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    const batch: string[] = [];
    let from = 0;
    let nl: number;
    while ((nl = buffer.indexOf('\n', from)) >= 0) {
      const end = nl > from && buffer.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      const data = dataOf(buffer.slice(from, end));
      if (data !== undefined) batch.push(data);
      from = nl + 1;
    }
    if (from > 0) buffer = buffer.slice(from);
    if (batch.length) yield batch;
  }
  const last = dataOf(buffer.trim());
  if (last !== undefined) yield [last];
}

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

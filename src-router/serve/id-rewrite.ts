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
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of chunks) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, '');
      buffer = buffer.slice(nl + 1);
      const event = parseDataLine(line);
      if (event !== undefined) yield event;
    }
  }
  const last = parseDataLine(buffer.trim());
  if (last !== undefined) yield last;
}

function parseDataLine(line: string): unknown {
  if (!line.startsWith('data:')) return undefined;
  const data = line.slice(5).trim();
  if (data === '[DONE]') return '[DONE]';
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

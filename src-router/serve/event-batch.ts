/**
 * Events of a relayed stream that arrived together (one chunk from the engine or node): the client gets them in one
 * write, and the relay spends one turn on them instead of one per event (issue #14).
 */
export class EventBatch {
  constructor(readonly events: readonly unknown[]) {}
}

/**
 * An event relayed as the bytes it arrived in (`text`, its JSON; the model ID already rewritten in it): parsed for
 * the request's bookkeeping, never serialised again. `value` is the event as parsed, for translators.
 */
export class RawEvent {
  constructor(readonly text: string, readonly value: unknown) {}
}

/** The events one by one, batches opened: for the stream translators (Ollama, Responses), which map each event. */
export async function* eachEvent(items: AsyncIterable<unknown>): AsyncGenerator<unknown> {
  for await (const item of items) {
    if (item instanceof EventBatch) for (const e of item.events) yield e instanceof RawEvent ? e.value : e;
    else yield item;
  }
}

/**
 * What to relay for one parsed SSE payload or answer body (`text` as received, `value` parsed, `rewritten` with the
 * model ID the client used): the received text when nothing changed, or when its one `"model"` key can be rewritten
 * in place; else the rewritten object, serialised when written.
 */
export function relayed(text: string, value: unknown, rewritten: unknown): unknown {
  if (rewritten === value) return typeof value === 'object' && value !== null ? new RawEvent(text, value) : value;
  const before = (value as { model?: unknown }).model;
  const after = (rewritten as { model?: unknown }).model;
  if (typeof before !== 'string' || typeof after !== 'string') return rewritten;
  const key = '"model"';
  const at = text.indexOf(key);
  if (at < 0 || text.indexOf(key, at + 1) >= 0) return rewritten;
  const old = `${key}:${JSON.stringify(before)}`;
  if (!text.startsWith(old, at)) return rewritten;
  return new RawEvent(`${text.slice(0, at)}${key}:${JSON.stringify(after)}${text.slice(at + old.length)}`, rewritten);
}

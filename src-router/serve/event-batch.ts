import { topModelKey, withModelName } from './id-rewrite';

/**
 * Events of a relayed stream that arrived together (one chunk from the engine or node): the client gets them in one
 * write, and the relay spends one turn on them instead of one per event.
 */
export class EventBatch {
  constructor(readonly events: readonly unknown[]) {}
}

const UNPARSED = Symbol('unparsed');

/**
 * An event relayed as the bytes it arrived in (`text`, its JSON; the model ID already rewritten in it), never
 * serialised again. `value` is the event as parsed, for translators: given, or parsed from `text` when first asked
 * (a plain delta the relay did not parse, `plain-delta`).
 */
export class RawEvent {
  private parsed: unknown;

  constructor(
    readonly text: string,
    value: unknown = UNPARSED,
  ) {
    this.parsed = value;
  }

  /** The parsed event; text that is not JSON is the text itself, as `parseData` gives it. */
  get value(): unknown {
    if (this.parsed === UNPARSED) {
      try {
        this.parsed = JSON.parse(this.text);
      } catch {
        this.parsed = this.text;
      }
    }
    return this.parsed;
  }
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
  // The text's one model key, when it is the top-level one the parse found.
  const key = topModelKey(text, before);
  if (!key) return rewritten;
  return new RawEvent(withModelName(text, key, after), rewritten);
}

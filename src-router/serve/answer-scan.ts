/**
 * An engine's non-streamed JSON answer read without parsing it: the router needs only its top-level
 * `model` (renamed in place) and, for the analytics row, its `usage` and `timings`. A full `JSON.parse` builds the
 * whole answer — an embedding of 1,536 numbers costs ~80–115 µs here — only to serialise it again; a scan of its
 * brackets and strings costs ~17–29 µs, and a short chat answer's a few.
 */
import { closingQuote, namesLocal, withModelName } from './id-rewrite';

/** Where a value lies in the text: from its first character to just after its last. */
export interface Span {
  from: number;
  to: number;
}

/** The top-level members the router reads, where they lie; absent when the answer has none (or none of that type). */
export interface AnswerSpans {
  /** The model's name, inside its quotes (its value is a string). */
  model?: Span;
  /** The `usage` object, braces included. */
  usage?: Span;
  /** llama-server's `timings` object, braces included. */
  timings?: Span;
}

const WANTED = ['model', 'usage', 'timings'] as const;
type Wanted = (typeof WANTED)[number];

/** The characters that shape JSON outside numbers and literals: a scan jumps from one to the next. */
const STRUCTURE = /[{}[\]"]/g;

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;
const skipSpace = (text: string, at: number) => {
  while (at < text.length && isSpace(text.charCodeAt(at))) at++;
  return at;
};

/**
 * The top-level `model`, `usage` and `timings` of a JSON object text. Null when the text must be parsed to be read
 * exactly: it is not one object with its strings closed and its brackets balanced, a top-level key is spelt with
 * escapes (it may be any name), or a wanted key comes twice (a parse takes the last). Members are not validated
 * beyond that: the answer passes on as the engine wrote it, as through any proxy.
 */
export function scanAnswer(text: string): AnswerSpans | null {
  const start = skipSpace(text, 0);
  if (text.charCodeAt(start) !== 123 /* { */) return null;
  const spans: AnswerSpans = {};
  const seen = new Set<Wanted>();
  let depth = 0;
  // A wanted object value at depth 1, until its closing brace.
  let open: { key: 'usage' | 'timings'; from: number } | null = null;
  STRUCTURE.lastIndex = start;
  for (let m = STRUCTURE.exec(text); m; m = STRUCTURE.exec(text)) {
    const at = m.index;
    const c = text.charCodeAt(at);
    if (c === 34 /* " */) {
      const end = closingQuote(text, at + 1);
      if (end < 0) return null;
      STRUCTURE.lastIndex = end + 1;
      if (depth !== 1) continue;
      const colon = skipSpace(text, end + 1);
      if (text.charCodeAt(colon) !== 58 /* : */) continue; // a string value, not a key
      const key = wantedKey(text, at + 1, end);
      if (key === null) return null;
      if (key === undefined) continue;
      if (seen.has(key)) return null;
      seen.add(key);
      const v = skipSpace(text, colon + 1);
      const vc = text.charCodeAt(v);
      if (key === 'model') {
        if (vc !== 34) continue;
        const to = closingQuote(text, v + 1);
        if (to < 0) return null;
        spans.model = { from: v + 1, to };
        STRUCTURE.lastIndex = to + 1;
      } else if (vc === 123) {
        open = { key, from: v };
      }
    } else if (c === 123 || c === 91 /* [ */) {
      depth++;
    } else {
      depth--;
      if (depth === 1 && open && c === 125 /* } */) {
        spans[open.key] = { from: open.from, to: at + 1 };
        open = null;
      } else if (depth === 0) {
        return skipSpace(text, at + 1) === text.length ? spans : null;
      } else if (depth < 0) {
        return null;
      }
    }
  }
  return null;
}

/** The wanted key named by the string from `from` to `to`; undefined for any other; null when spelt with escapes. */
function wantedKey(text: string, from: number, to: number): Wanted | undefined | null {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === 92 /* \ */) return null;
  for (const k of WANTED) if (to - from === k.length && text.startsWith(k, from)) return k;
  return undefined;
}

/** An answer read from its scan: its text with the model renamed, and the parsed `usage` and `timings` when asked for. */
export interface UnparsedAnswer {
  text: string;
  /** What the analytics row reads of it (absent unless asked for, or when it has none). */
  measured: { usage?: unknown; timings?: unknown };
}

/**
 * An answer's text for the client, without parsing it: its top-level model renamed to `publicId` where it names one of
 * `localNames` (as `rewriteResponseModel` renames a parsed one), and, with `measure`, its `usage` and `timings`
 * parsed alone. Undefined when it must be parsed whole (`scanAnswer` gives null, or a member read is not JSON).
 */
export function unparsedAnswer(
  text: string,
  localNames: readonly string[],
  publicId: string,
  measure: boolean,
): UnparsedAnswer | undefined {
  const spans = scanAnswer(text);
  if (!spans) return undefined;
  try {
    const part = (s: Span | undefined) => (s ? (JSON.parse(text.slice(s.from, s.to)) as unknown) : undefined);
    const measured = measure ? { usage: part(spans.usage), timings: part(spans.timings) } : {};
    if (!spans.model) return { text, measured };
    const raw = text.slice(spans.model.from, spans.model.to);
    const name = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
    if (!localNames.some((local) => namesLocal(name, local, publicId))) return { text, measured };
    return { text: name === publicId ? text : withModelName(text, spans.model, publicId), measured };
  } catch {
    return undefined; // a member that is not JSON: the whole parse says what is wrong
  }
}

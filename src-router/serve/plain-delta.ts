import type { Target } from '../registry';
import { RawEvent } from './event-batch';
import { closingQuote, depthAt, escapedAt, modelKey, namesLocal, withModelName } from './id-rewrite';

/**
 * The common SSE payload of a relayed stream, a plain content delta, relayed without parsing it (parsing
 * each chunk was the largest cost of the relay). A delta is plain when it is an object with `choices` whose compact
 * JSON shows a non-empty `content` or `text` string (one generated token), names no `usage`, `timings` or `error`
 * (what the request's bookkeeping reads), and its one `"model"` key, if any, is a first-level key whose name can be
 * rewritten in place as `rewrite` would (`id-rewrite`'s rules: the exact local or helper ID, or a path ending in it).
 * Anything else — the role and finish chunks, spaced JSON, a nested or second `"model"`, a name that is not JSON,
 * bytes after the object — is not a plain delta (null) and is parsed like any other event.
 *
 * Keys are found as text, which is exact for JSON: inside a string value every `"` is escaped, so `"content":"`
 * only ever stands for a key followed by a string.
 */
export function plainDelta(data: string, target: Target): RawEvent | null {
  // An object (trailing bytes after it would not be JSON: the parser says what it is) whose choices carry the token.
  if (
    data.charCodeAt(0) !== 123 /* { */ ||
    data.charCodeAt(data.length - 1) !== 125 /* } */ ||
    !data.includes('"choices":[')
  )
    return null;
  if (!hasToken(data) || data.includes('"usage"') || data.includes('"timings"') || data.includes('"error"'))
    return null;
  // A `\u` escape could spell a key these checks look for (`"us\u0061ge"`): the parser reads it.
  if (data.includes('\\u')) return null;
  if (!data.includes('"model"')) return new RawEvent(data);
  // One compact model key, renamed only where it is a first-level key, as `rewrite` does.
  const key = modelKey(data);
  if (!key) return null;
  if (!renamed(key.name, target)) return new RawEvent(data);
  if (depthAt(data, key.at) !== 1) return null;
  return new RawEvent(withModelName(data, key, target.clusterId));
}

/** Whether `rewrite` gives this model name the client's ID (`rewriteResponseModel` over the target's names). */
function renamed(name: string, target: Target): boolean {
  return name !== target.clusterId && target.names.some((n) => namesLocal(name, n, target.clusterId));
}

/** A non-empty `content` or `text` string key: the chunk carries a generated token. */
function hasToken(data: string): boolean {
  return nonEmptyString(data, '"content":"') || nonEmptyString(data, '"text":"');
}

function nonEmptyString(data: string, key: string): boolean {
  const i = data.indexOf(key);
  return i >= 0 && data.charCodeAt(i + key.length) !== 34 /* " */;
}

/** A plain delta's text around its token's string: what the next deltas of a stream usually share. */
interface Shape {
  prefix: string;
  suffix: string;
  /** The same parts as relayed (the model renamed). */
  outPrefix: string;
  outSuffix: string;
}

/**
 * The plain deltas of one stream. The deltas of a stream differ only in their token, so once one delta
 * was read, the next one with the same text before and after its token's string — the string itself a JSON string's
 * body: no unescaped quote, not ending in an escape — is the same event with another token: it is relayed as the
 * first one was, its token put in, without reading it again. A delta of another shape is read in full (`plainDelta`)
 * and its shape kept for the next.
 */
export class PlainDeltas {
  private shape: Shape | null = null;

  constructor(private readonly target: Target) {}

  relay(data: string): RawEvent | null {
    const s = this.shape;
    if (s && data.length > s.prefix.length + s.suffix.length && data.startsWith(s.prefix) && data.endsWith(s.suffix)) {
      const token = data.slice(s.prefix.length, data.length - s.suffix.length);
      if (isStringBody(token)) return new RawEvent(s.outPrefix + token + s.outSuffix);
    }
    const out = plainDelta(data, this.target);
    this.shape = out ? shapeOf(data, out.text) : null;
    return out;
  }
}

function shapeOf(data: string, out: string): Shape | null {
  const a = tokenSpan(data);
  const b = tokenSpan(out);
  if (!a || !b || data.slice(a.from, a.to) !== out.slice(b.from, b.to)) return null;
  return {
    prefix: data.slice(0, a.from),
    suffix: data.slice(a.to),
    outPrefix: out.slice(0, b.from),
    outSuffix: out.slice(b.to),
  };
}

/** Where the token's string is (its body, quotes excluded): the first non-empty `content`, else `text`, as `hasToken` reads. */
function tokenSpan(text: string): { from: number; to: number } | null {
  for (const key of ['"content":"', '"text":"']) {
    const at = text.indexOf(key);
    if (at < 0 || text.charCodeAt(at + key.length) === 34 /* " */) continue;
    const from = at + key.length;
    const to = closingQuote(text, from);
    return to < 0 ? null : { from, to };
  }
  return null;
}

/** Text that can stand between two quotes of a JSON string: every quote in it escaped, no escape left open at its end. */
function isStringBody(s: string): boolean {
  for (let q = s.indexOf('"'); q >= 0; q = s.indexOf('"', q + 1)) if (!escapedAt(s, q)) return false;
  return !escapedAt(s, s.length);
}

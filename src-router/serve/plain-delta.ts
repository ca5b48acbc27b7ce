import type { Target } from '../registry';
import { RawEvent } from './event-batch';
import { depthAt, modelKey, namesLocal, withModelName } from './id-rewrite';

/**
 * The common SSE payload of a relayed stream, a plain content delta, relayed without parsing it (issue #14: parsing
 * each chunk was the largest cost of the relay). A delta is plain when it is an object with `choices` whose compact
 * JSON shows a non-empty `content` or `text` string (one generated token), names no `usage`, `timings` or `error`
 * (what the request's bookkeeping reads), and its one `"model"` key, if any, is a first-level key whose name can be
 * rewritten in place as `rewrite` would (`id-rewrite`'s rules: the exact local or helper ID, or a path ending in it).
 * Anything else — the role and finish chunks, spaced JSON, a nested or second `"model"`, a name that is not JSON,
 * bytes after the object — is parsed as before: null.
 *
 * Keys are found as text, which is exact for JSON: inside a string value every `"` is escaped, so `"content":"`
 * only ever stands for a key followed by a string.
 */
export function plainDelta(data: string, target: Target): RawEvent | null {
  // An object (trailing bytes after it would not be JSON: the parser says what it is) whose choices carry the token.
  if (data.charCodeAt(0) !== 123 /* { */ || data.charCodeAt(data.length - 1) !== 125 /* } */ || !data.includes('"choices":[')) return null;
  if (!hasToken(data) || data.includes('"usage"') || data.includes('"timings"') || data.includes('"error"')) return null;
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

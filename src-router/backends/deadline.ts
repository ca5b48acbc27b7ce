/**
 * A time limit that is cleared when the work ends. `AbortSignal.timeout` keeps its timer until it fires, so long
 * request timeouts (minutes) on a busy node would pile up one pending timer per request.
 */
export interface Deadline {
  signal: AbortSignal;
  clear(): void;
}

export function deadline(ms: number): Deadline {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')), ms);
  timer.unref?.();
  return { signal: ctl.signal, clear: () => clearTimeout(timer) };
}

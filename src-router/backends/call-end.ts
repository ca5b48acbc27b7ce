/**
 * What ends one call to an engine, a node or a static-route endpoint: the client leaving (its signal), a
 * deadline, or an explicit cancel. One object per call instead of three AbortSignals and their listeners — each
 * AbortSignal with a listener costs more than the rest of a proxied request's bookkeeping.
 */
export type EndReason = 'client' | 'timeout' | 'cancelled';

/**
 * That the client of a request went away: cheap to ask and to listen to. A real AbortSignal is made only
 * where something needs one (a wait in a router queue or for a lane): on the proxy path none is.
 */
export interface ClientGone {
  readonly aborted: boolean;
  /** Calls `fn` once when the client goes (at once if it has); the returned function unsubscribes. */
  onAbort(fn: () => void): () => void;
  /** An AbortSignal that aborts when the client goes, made on first use. */
  readonly signal: AbortSignal;
  /**
   * Where the answer goes to a client connection: calls `fn` once the connection is done with it, with null when the
   * client took it all (or left), else why it did not take it (it stopped reading and was cut off).
   */
  onDelivered?(fn: (undelivered: string | null) => void): void;
}

const noop = () => {};

/**
 * Callbacks run once when something ends (a call, a client): `add` runs one at once when it already has, and
 * returns its unsubscribe. Shared by `CallEnd` and the reply's `ClientGone`.
 */
export class OnceHooks {
  private fired = false;
  private readonly fns: (() => void)[] = [];

  add(fn: () => void): () => void {
    if (this.fired) {
      fn();
      return noop;
    }
    this.fns.push(fn);
    return () => {
      const i = this.fns.indexOf(fn);
      if (i >= 0) this.fns.splice(i, 1);
    };
  }

  fire(): void {
    this.fired = true;
    for (const fn of this.fns.splice(0)) fn();
  }
}

/** A ClientGone that follows an AbortSignal (a borrowed request's explicit cancel, a relay's caller). */
export function goneOf(signal: AbortSignal): ClientGone {
  return {
    get aborted() {
      return signal.aborted;
    },
    signal,
    onAbort(fn) {
      if (signal.aborted) {
        fn();
        return noop;
      }
      signal.addEventListener('abort', fn, { once: true });
      return () => signal.removeEventListener('abort', fn);
    },
  };
}

export class CallEnd {
  private why: EndReason | null = null;
  private readonly hooks = new OnceHooks();
  private timer: NodeJS.Timeout | undefined;
  private unlisten: (() => void) | undefined;
  private signalCtl: AbortController | undefined;
  /** Cleared: the call is over, nothing ends it any more. */
  private over = false;

  /** `client`: the client going away (absent: nothing but the deadline and `cancel` ends it); `timeoutMs`: the deadline. */
  constructor(
    client: ClientGone | undefined,
    readonly timeoutMs: number,
  ) {
    if (client?.aborted) {
      this.why = 'client';
      return;
    }
    this.timer = setTimeout(() => this.end('timeout'), timeoutMs);
    this.timer.unref();
    if (client) this.unlisten = client.onAbort(() => this.end('client'));
  }

  /** Why the call ended, or null while it runs. */
  get reason(): EndReason | null {
    return this.why;
  }

  get ended(): boolean {
    return this.why !== null;
  }

  /** Ends the call now: the engine or node sees it cancelled. */
  cancel(): void {
    this.end('cancelled');
  }

  /** Calls `fn` once when the call ends (at once if it has); the returned function unsubscribes. */
  onEnd(fn: () => void): () => void {
    if (this.why) {
      fn();
      return noop;
    }
    return this.hooks.add(fn);
  }

  /**
   * The call is over: the deadline and the client's listener go, and a later end — a cancel too — changes nothing (a
   * stream's end at its client after its relay ended leaves the engine's answer to end).
   */
  clear(): void {
    this.over = true;
    this.stopListening();
  }

  /** The error a read or write of the call fails with once it ended: AbortError, or TimeoutError for the deadline. */
  error(): Error {
    const e = new Error(this.why === 'timeout' ? `no answer within ${this.timeoutMs} ms` : 'aborted');
    e.name = this.why === 'timeout' ? 'TimeoutError' : 'AbortError';
    return e;
  }

  /** A real AbortSignal that follows this call (for `fetch` on the rare upload path); made once, on demand. */
  toSignal(): AbortSignal {
    if (!this.signalCtl) {
      const ctl = (this.signalCtl = new AbortController());
      this.onEnd(() => ctl.abort(this.error()));
    }
    return this.signalCtl.signal;
  }

  private stopListening(): void {
    clearTimeout(this.timer);
    this.unlisten?.();
    this.unlisten = undefined;
  }

  private end(why: EndReason): void {
    if (this.why || this.over) return;
    this.why = why;
    this.stopListening();
    this.hooks.fire();
  }
}

/**
 * The request path's one HTTP client for JSON calls to engines, other nodes and static-route endpoints:
 * undici's dispatcher with a handler of callbacks — no `ClientRequest`, no `IncomingMessage` stream, no web streams —
 * over keep-alive connections, one write per request, the answer's body handed over as it arrives. What ends a call is
 * one `CallEnd` (client, deadline, cancel), not AbortSignals. Uploads (multipart transcriptions) keep `fetch`: they are
 * rare and large.
 */
import { Agent, type Dispatcher } from 'undici';
import { ANSWER_LIMIT, AnswerTooLarge, startOf } from './answer-limits';
import type { CallEnd } from './call-end';

/** What callers read of an answer: the parts of a WHATWG `Response` the request path uses. */
export interface HttpAnswer {
  status: number;
  ok: boolean;
  statusText: string;
  headers: { get(name: string): string | null };
  /** The body as it arrives (chunks of bytes); read it once, by iterating or by `text()` / `json()`. */
  body: AsyncIterable<Uint8Array> | null;
  /**
   * The whole body as text, at most `limit` bytes (default `ANSWER_LIMIT`): past it nothing more is read, the
   * connection is closed and it rejects with `AnswerTooLarge`.
   */
  text(limit?: number): Promise<string>;
  /** The whole body parsed as JSON, bounded as `text`. */
  json(limit?: number): Promise<unknown>;
  /** Trailers the answer ended with (read once its body ended). */
  trailers?(): Record<string, string | undefined>;
  /**
   * The reader has all it wants (a stream's `[DONE]`) though the body has not ended: the rest is read and dropped, so
   * the connection stays open for the next call (stopping the read would close it). A body that does not end within
   * `DRAIN_MS` is cut off. Call it before leaving the body's loop.
   */
  drainRest?(): void;
}

/**
 * Connections kept open to each upstream: enough for every lane and forward at once. Idle ones close after 4 s, before
 * the upstream's own keep-alive ends them (5 s in llama-server, uvicorn and Node), so a request is rarely written to a
 * connection the upstream is closing. No header or body timeout: once connected, the call's end is the one deadline.
 * A connect that gets no answer fails after undici's 10 s (`ETIMEDOUT`): the peer is unreachable, another replica
 * may be tried.
 */
const dispatcher = new Agent({
  connections: 512,
  pipelining: 1,
  keepAliveTimeout: 4_000,
  headersTimeout: 0,
  bodyTimeout: 0,
});

/** Parsed upstream URLs: a node calls the same few endpoints over and over. */
const targets = new Map<string, { origin: string; path: string; href: string }>();
function targetOf(url: string) {
  let t = targets.get(url);
  if (!t) {
    const u = new URL(url);
    t = { origin: u.origin, path: `${u.pathname}${u.search}`, href: u.href };
    if (targets.size > 1_000) targets.clear();
    targets.set(url, t);
  }
  return t;
}

/** undici's codes as the system's, in messages operators read: a connection the peer closed, a connect that timed out. */
const SYSTEM_CODE: Record<string, string> = { UND_ERR_SOCKET: 'ECONNRESET', UND_ERR_CONNECT_TIMEOUT: 'ETIMEDOUT' };

/** Why a call failed, as callers read it: `name` AbortError / TimeoutError when its end came, else `cause`. */
function failure(url: string, err: Error & { code?: string }, end: CallEnd): Error {
  if (end.ended) return end.error();
  const code = err.code === undefined ? undefined : (SYSTEM_CODE[err.code] ?? err.code);
  return Object.assign(new Error(`request to ${url} failed: ${code ?? err.message}`), { cause: err });
}

/** Chunks a reader has not taken yet before the connection is paused (and resumed once it has taken them). */
const QUEUED_CHUNKS = 16;

/** How long a body whose reader has all it wants may take to end before its connection is closed (`drainRest`). */
export const DRAIN_MS = 1_000;

type Waiter = { resolve: (r: IteratorResult<Uint8Array>) => void; reject: (err: Error) => void };

/**
 * An answer's body as an async iterator fed by the handler's data callbacks. What one read of the socket
 * brought is handed over as one piece: the parser calls back per HTTP chunk (an engine writes one per SSE event), and
 * a relay that took them one by one paid an async step and a client write for each. A reader that falls behind pauses
 * the connection (backpressure); one that stops early (`return`, a `break`) aborts the answer. A body that ends before
 * it is complete, or with an error, rejects with its error once what arrived before was taken. `collect()` reads the
 * whole body in one promise (a non-streamed answer).
 */
class BodyChunks implements AsyncIterableIterator<Uint8Array> {
  private queue: Buffer[] = [];
  private waiter: Waiter | null = null;
  /** Collecting the whole body: no hand-overs, no pausing; settled at its end, or once more than `limit` bytes came. */
  private whole: { resolve: (text: string) => void; reject: (err: Error) => void; limit: number } | null = null;
  /** Bytes queued (while collecting: the body's size so far). */
  private size = 0;
  /** The current read's callbacks are still running: its chunks are looked at once they all have. */
  private due = false;
  private ended = false;
  private error: Error | null = null;
  private taken = false;
  /** Draining (`drainRest`): the rest is dropped as it comes; cut off when this fires first. */
  private drainTimer: NodeJS.Timeout | null = null;

  constructor(private readonly controller: Dispatcher.DispatchController) {}

  /** The reader: the body is read once. */
  claim(): this {
    if (this.taken) throw new TypeError('body already read');
    this.taken = true;
    return this;
  }

  push(chunk: Buffer): void {
    // Given up or draining: the rest flows away.
    if (this.ended || this.drainTimer) return;
    this.queue.push(chunk);
    this.size += chunk.length;
    if (this.whole && this.size > this.whole.limit) return this.overflow(this.whole.limit);
    // Every callback of one read runs before the microtask: what it brought goes over together.
    if (!this.whole && !this.due) {
      this.due = true;
      queueMicrotask(this.readDone);
    }
  }

  /** A read's chunks are all queued: the waiting reader takes them, or, with none waiting, many pause the connection. */
  private readonly readDone = (): void => {
    this.due = false;
    const w = this.waiter;
    if (!w) {
      if (this.queue.length >= QUEUED_CHUNKS && !this.ended && !this.whole) this.controller.pause();
      return;
    }
    if (!this.queue.length) return;
    this.waiter = null;
    w.resolve({ value: this.take(), done: false });
  };

  /** Everything queued, as one piece. */
  private take(): Buffer {
    const q = this.queue;
    this.queue = [];
    this.size = 0;
    if (this.controller.paused && !this.ended) this.controller.resume();
    return q.length === 1 ? q[0] : Buffer.concat(q);
  }

  /** Its end (error null) or its failure. */
  finish(error: Error | null): void {
    if (this.drainTimer) {
      clearTimeout(this.drainTimer);
      this.drainTimer = null;
      this.ended = true;
      return;
    }
    if (this.ended) return;
    this.ended = true;
    this.error = error;
    const whole = this.whole;
    if (whole) {
      this.whole = null;
      if (error) whole.reject(error);
      else whole.resolve(this.take().toString('utf8'));
      return;
    }
    const w = this.waiter;
    if (!w) return;
    this.waiter = null;
    // What arrived before the end is the reader's first; then the end, or the error once.
    this.next().then(w.resolve, w.reject);
  }

  /** More than `limit` bytes of a body read whole: it is given up, its connection closed, the read rejected. */
  private overflow(limit: number): void {
    const err = new AnswerTooLarge(limit, startOf(this.queue));
    this.queue = [];
    this.size = 0;
    const whole = this.whole;
    this.whole = null;
    this.abort();
    whole?.reject(err);
  }

  /** The whole body as text, in one promise; more than `limit` bytes reject (`AnswerTooLarge`). */
  collect(limit: number): Promise<string> {
    if (this.size > limit) {
      const err = new AnswerTooLarge(limit, startOf(this.queue));
      this.queue = [];
      this.size = 0;
      this.abort();
      this.error = null;
      return Promise.reject(err);
    }
    if (this.ended) {
      // Ended before it was read: its error, or what arrived.
      const err = this.error;
      this.error = null;
      if (err) {
        this.queue = [];
        this.size = 0;
        return Promise.reject(err);
      }
      return Promise.resolve(this.take().toString('utf8'));
    }
    return new Promise((resolve, reject) => {
      this.whole = { resolve, reject, limit };
      if (this.controller.paused) this.controller.resume();
    });
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    if (this.drainTimer) return Promise.resolve({ value: undefined, done: true });
    if (this.queue.length) return Promise.resolve({ value: this.take(), done: false });
    if (this.ended) {
      const err = this.error;
      this.error = null;
      return err ? Promise.reject(err) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** The reader has all it wants: the rest is dropped until the body ends, or cut off after `DRAIN_MS`. */
  drain(): void {
    if (this.ended || this.drainTimer) return;
    this.queue = [];
    this.size = 0;
    // A read still waiting ends here: nothing more is handed over.
    const w = this.waiter;
    this.waiter = null;
    w?.resolve({ value: undefined, done: true });
    this.drainTimer = setTimeout(() => {
      this.drainTimer = null;
      this.abort();
    }, DRAIN_MS);
    this.drainTimer.unref();
    if (this.controller.paused) this.controller.resume();
  }

  /** The reader stopped early: the rest of the body is not wanted (a draining body ends on its own). */
  return(): Promise<IteratorResult<Uint8Array>> {
    this.queue = [];
    this.size = 0;
    if (!this.drainTimer) this.abort();
    this.error = null;
    return Promise.resolve({ value: undefined, done: true });
  }

  private abort(): void {
    if (!this.ended) {
      this.ended = true;
      this.controller.abort(Object.assign(new Error('the answer was not read to its end'), { name: 'AbortError' }));
    }
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

type Outcome = { answer?: HttpAnswer; retry?: boolean; error?: Error };

/**
 * How soon after its write a kept-alive connection's close counts as stale: the upstream closing it as the request was
 * written shows within a round trip; later, the upstream may have started the request (a crash mid-job), and a job
 * must never run twice.
 */
const STALE_WITHIN_MS = 250;

/**
 * A kept-alive connection the upstream closed as this request was written: undici's socket error ("other side
 * closed"), before this answer's head, on a connection that had read earlier answers, soon after the write. The
 * upstream saw nothing of the request. A reset (RST) carries no such facts and is not retried: with idle connections
 * closed before the upstream's own keep-alive ends and checked before reuse, a stale one is rare.
 */
function staleConnection(err: Error & { code?: string; socket?: { bytesRead?: number } }, writtenAt: number): boolean {
  return (
    err.code === 'UND_ERR_SOCKET' && (err.socket?.bytesRead ?? 0) > 0 && performance.now() - writtenAt < STALE_WITHIN_MS
  );
}

/** One call's handler: the answer resolves at its head, its body follows through `BodyChunks`. */
class Call implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private body: BodyChunks | null = null;
  private trailers: Record<string, string | undefined> = {};
  private settled = false;
  /** When the request went to its connection. */
  private writtenAt = 0;
  private readonly stop: () => void;

  constructor(
    private readonly href: string,
    private readonly end: CallEnd,
    private readonly settle: (o: Outcome) => void,
  ) {
    // Until the answer arrives the call's end fails it at once (even while it waits for a connection); after, its body.
    this.stop = end.onEnd(() => {
      if (this.controller) this.controller.abort(end.error());
      else this.resolve({ error: end.error() });
    });
  }

  private resolve(o: Outcome): void {
    if (this.settled) return;
    this.settled = true;
    this.settle(o);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    this.writtenAt = performance.now();
    if (this.end.ended) controller.abort(this.end.error());
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
    statusMessage?: string,
  ): void {
    if (statusCode < 200) return; // informational: the answer's head is still to come
    const body = (this.body = new BodyChunks(controller));
    const take = () => body.claim();
    this.resolve({
      answer: {
        status: statusCode,
        ok: statusCode >= 200 && statusCode < 300,
        statusText: statusMessage ?? '',
        headers: {
          get: (name) => {
            const v = headers[name.toLowerCase()];
            return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
          },
        },
        body: { [Symbol.asyncIterator]: take },
        text: async (limit = ANSWER_LIMIT) => take().collect(limit),
        json: async (limit = ANSWER_LIMIT) => JSON.parse(await take().collect(limit)) as unknown,
        trailers: () => this.trailers,
        drainRest: () => body.drain(),
      },
    });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.body?.push(chunk);
  }

  onResponseEnd(
    _controller: Dispatcher.DispatchController,
    trailers: Record<string, string | string[] | undefined>,
  ): void {
    this.stop();
    for (const [k, v] of Object.entries(trailers)) this.trailers[k] = Array.isArray(v) ? v.join(', ') : v;
    this.body?.finish(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error & { code?: string }): void {
    this.stop();
    if (this.body) return this.body.finish(failure(this.href, err, this.end));
    // A kept-alive connection the upstream closed just before this request was written: it saw nothing; once more.
    const stale = !this.end.ended && this.controller !== null && staleConnection(err, this.writtenAt);
    this.resolve(stale ? { retry: true } : { error: failure(this.href, err, this.end) });
  }
}

function once(
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  payload: Buffer | null,
  end: CallEnd,
): Promise<Outcome> {
  const t = targetOf(url);
  return new Promise((resolve) => {
    const handler = new Call(t.href, end, resolve);
    if (end.ended) return;
    try {
      dispatcher.dispatch({ origin: t.origin, path: t.path, method, headers, body: payload }, handler);
    } catch (err) {
      handler.onResponseError(undefined, err as Error); // a header undici refuses: the call fails, as a refused connection does
    }
  });
}

/** POSTs a JSON body; resolves when the answer's headers arrive. The call's end cancels it and its body. */
export function postJson(
  url: string,
  body: unknown,
  end: CallEnd,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return call('POST', url, Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), end, {
    ...headers,
    'content-type': 'application/json',
  });
}

/** GETs a URL (another node's API); resolves when the answer's headers arrive. */
export function getUrl(url: string, end: CallEnd, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return call('GET', url, null, end, headers);
}

async function call(
  method: 'GET' | 'POST',
  url: string,
  payload: Buffer | null,
  end: CallEnd,
  headers: Record<string, string>,
): Promise<HttpAnswer> {
  for (let attempt = 0; ; attempt++) {
    const r = await once(method, url, headers, payload, end);
    if (r.answer) return r.answer;
    if (r.retry && attempt === 0) continue;
    // The first try's connection closed as it was written, and the upstream may have read it after all (a node shutting
    // down reads, then closes): however the second try failed — its port now refusing included —, the call may have
    // reached the upstream, and fails as a reset, never as a call that was not sent.
    if (attempt > 0 && !end.ended)
      throw failure(url, Object.assign(new Error('connection reset'), { code: 'ECONNRESET', cause: r.error }), end);
    throw r.error ?? failure(url, Object.assign(new Error('connection reset'), { code: 'ECONNRESET' }), end);
  }
}

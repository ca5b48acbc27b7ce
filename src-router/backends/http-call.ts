/**
 * The request path's one HTTP client for JSON calls to engines, other nodes and static-route endpoints (issue #14):
 * `node:http` over a keep-alive agent, one write per request, the answer's body as the socket's own stream. WHATWG
 * `fetch` costs about 1.5 ms of waiting and a web-stream pipeline per call on loopback; this is what a proxy needs.
 * What ends a call is one `CallEnd` (client, deadline, cancel), not AbortSignals. Uploads (multipart transcriptions)
 * keep `fetch`: they are rare and large.
 */
import { Agent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { finished } from 'node:stream';
import type { CallEnd } from './call-end';

/** What callers read of an answer: the parts of a WHATWG `Response` the request path uses. */
export interface HttpAnswer {
  status: number;
  ok: boolean;
  statusText: string;
  headers: { get(name: string): string | null };
  /** The body as it arrives (chunks of bytes); read it once, by iterating or by `text()` / `json()`. */
  body: AsyncIterable<Uint8Array> | null;
  text(): Promise<string>;
  json(): Promise<unknown>;
  /** Trailers the answer ended with (read once its body ended); absent on answers that are not `node:http`'s. */
  trailers?(): Record<string, string | undefined>;
}

/** Sockets kept open to each upstream: enough for every lane and forward at once (idle ones close with the upstream's keep-alive). */
const agent = new Agent({ keepAlive: true, keepAliveMsecs: 1_000, maxSockets: 512, maxFreeSockets: 64, scheduling: 'lifo' });

/** Parsed upstream URLs: a node calls the same few endpoints over and over. */
const targets = new Map<string, { host: string; port: string | number; path: string; href: string }>();
function targetOf(url: string) {
  let t = targets.get(url);
  if (!t) {
    const u = new URL(url);
    t = { host: u.hostname, port: u.port || 80, path: `${u.pathname}${u.search}`, href: u.href };
    if (targets.size > 1_000) targets.clear();
    targets.set(url, t);
  }
  return t;
}

/** Why a call failed, as callers read it: `name` AbortError / TimeoutError when its end came, else `cause`. */
function failure(url: string, err: Error & { code?: string }, end: CallEnd): Error {
  if (end.ended) return end.error();
  return Object.assign(new Error(`request to ${url} failed: ${err.code ?? err.message}`), { cause: err });
}

/** Chunks a reader has not taken yet before the socket is paused (and resumed once it has taken them). */
const QUEUED_CHUNKS = 16;

/**
 * An answer's body as an async iterator fed by the response's `data` events (issue #14). What one read of the socket
 * brought is handed over as one piece: the parser emits a `data` event per HTTP chunk (an engine writes one per SSE
 * event), and a relay that took them one by one paid an async step and a client write for each. The stream's own
 * iterator and a generator around it took two async steps per chunk; this takes one per read. A reader that falls
 * behind pauses the socket (backpressure); one that stops early (`return`, a `break`) destroys the response. A body
 * that ends before it is complete, or with an error, rejects with `fail`'s error once what arrived before was taken.
 */
class BodyChunks implements AsyncIterableIterator<Uint8Array> {
  private queue: Buffer[] = [];
  private waiter: { resolve: (r: IteratorResult<Uint8Array>) => void; reject: (err: Error) => void } | null = null;
  /** A hand-over to the waiting reader is due once the current read's events have all fired. */
  private due = false;
  private ended = false;
  private error: Error | null = null;

  constructor(private readonly res: IncomingMessage, fail: (err: Error & { code?: string }) => Error) {
    res.on('data', (chunk: Buffer) => {
      // Given up: the rest flows away, so a complete answer still ends and frees its connection.
      if (this.ended) return;
      this.queue.push(chunk);
      if (this.waiter) {
        // Every event of one read fires before the microtask: they go over together.
        if (!this.due) {
          this.due = true;
          queueMicrotask(this.handOver);
        }
      } else if (this.queue.length >= QUEUED_CHUNKS) res.pause();
    });
    // Its end, error or break-off (destroyed before its end: a signal, a reset), also one that came before this
    // reader did (the call ended between the answer's head and the first read).
    finished(res, (err) => this.finish(err ? fail(err) : null));
  }

  private readonly handOver = (): void => {
    this.due = false;
    const w = this.waiter;
    if (!w || !this.queue.length) return;
    this.waiter = null;
    w.resolve({ value: this.take(), done: false });
  };

  /** Everything queued, as one piece. */
  private take(): Buffer {
    const q = this.queue;
    this.queue = [];
    if (this.res.isPaused() && !this.ended) this.res.resume();
    return q.length === 1 ? q[0] : Buffer.concat(q);
  }

  private finish(error: Error | null): void {
    if (this.ended) return;
    this.ended = true;
    this.error = error;
    const w = this.waiter;
    if (!w) return;
    this.waiter = null;
    // What arrived before the end is the reader's first; then the end, or the error once.
    this.next().then(w.resolve, w.reject);
  }

  next(): Promise<IteratorResult<Uint8Array>> {
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

  /** The reader stopped early: the rest of the body is not wanted. */
  return(): Promise<IteratorResult<Uint8Array>> {
    this.queue = [];
    this.ended = true;
    this.error = null;
    if (!this.res.complete) this.res.destroy();
    else this.res.resume();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

function answerOf(res: IncomingMessage, url: string, end: CallEnd): HttpAnswer {
  const status = res.statusCode ?? 0;
  let used = false;
  const take = () => {
    if (used) throw new TypeError('body already read');
    used = true;
    return res;
  };
  const body: AsyncIterable<Uint8Array> = { [Symbol.asyncIterator]: () => new BodyChunks(take(), (err) => failure(url, err, end)) };
  // The whole body: mostly one piece (what one read brought), the same end, error and break-off as a stream's.
  const collect = async (): Promise<string> => {
    const pieces: Buffer[] = [];
    for await (const piece of body) pieces.push(piece as Buffer);
    return (pieces.length === 1 ? pieces[0] : Buffer.concat(pieces)).toString('utf8');
  };
  return {
    status,
    ok: status >= 200 && status < 300,
    statusText: res.statusMessage ?? '',
    headers: { get: (name) => {
      const v = res.headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    } },
    body,
    text: collect,
    json: async () => JSON.parse(await collect()) as unknown,
    trailers: () => res.trailers,
  };
}

function once(method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload: Buffer | null, end: CallEnd): Promise<{ answer?: HttpAnswer; retry?: boolean; error?: Error }> {
  const t = targetOf(url);
  return new Promise((resolve) => {
    const req: ClientRequest = httpRequest({ host: t.host, port: t.port, path: t.path, method, agent, headers: payload ? { ...headers, 'content-length': String(payload.length) } : headers });
    let res: IncomingMessage | undefined;
    // Until the answer arrives the call's end destroys the request; after, its body (a client that left, a deadline).
    const stop = end.onEnd(() => (res ?? req).destroy(end.error()));
    req.once('response', (r) => {
      res = r;
      r.once('close', stop);
      resolve({ answer: answerOf(r, t.href, end) });
    });
    req.once('error', (err: Error & { code?: string }) => {
      if (res) return; // the body's own error is the reader's
      stop();
      // A kept-alive socket the upstream closed just before this request was written: it saw nothing; once more.
      const stale = req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE') && !end.ended;
      resolve(stale ? { retry: true } : { error: failure(t.href, err, end) });
    });
    if (!end.ended) req.end(payload ?? undefined);
  });
}

/** POSTs a JSON body; resolves when the answer's headers arrive. The call's end cancels it and its body. */
export function postJson(url: string, body: unknown, end: CallEnd, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return call('POST', url, Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), end, { ...headers, 'content-type': 'application/json' });
}

/** GETs a URL (another node's API); resolves when the answer's headers arrive. */
export function getUrl(url: string, end: CallEnd, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return call('GET', url, null, end, headers);
}

async function call(method: 'GET' | 'POST', url: string, payload: Buffer | null, end: CallEnd, headers: Record<string, string>): Promise<HttpAnswer> {
  for (let attempt = 0; ; attempt++) {
    const r = await once(method, url, headers, payload, end);
    if (r.answer) return r.answer;
    if (!r.retry || attempt > 0) throw r.error ?? failure(url, Object.assign(new Error('connection reset'), { code: 'ECONNRESET' }), end);
  }
}

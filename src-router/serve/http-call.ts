/**
 * The request path's one HTTP client for JSON calls to engines, other nodes and static-route endpoints (issue #14):
 * `node:http` over a keep-alive agent, one write per request, the answer's body as the socket's own stream. WHATWG
 * `fetch` costs about 1.5 ms of waiting and a web-stream pipeline per call on loopback; this is what a proxy needs.
 * Uploads (multipart transcriptions) keep `fetch`: they are rare and large.
 */
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';

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

/**
 * The signals that end a call (the client's, a deadline, a cancel): listened to one by one — `AbortSignal.any` per
 * request costs more than the call itself.
 */
export type Signals = AbortSignal | readonly AbortSignal[];
const list = (s: Signals): readonly AbortSignal[] => (Array.isArray(s) ? s : [s as AbortSignal]);
const abortedOf = (s: Signals) => list(s).find((x) => x.aborted);
function onAnyAbort(s: Signals, fn: () => void): () => void {
  const signals = list(s);
  for (const x of signals) x.addEventListener('abort', fn, { once: true });
  return () => {
    for (const x of signals) x.removeEventListener('abort', fn);
  };
}

/** Why a call failed, as callers read it: `name` AbortError / TimeoutError when a signal ended it, else `cause`. */
function failure(url: string, err: Error & { code?: string }, signals: Signals): Error {
  const aborted = abortedOf(signals);
  if (aborted) {
    const reason = aborted.reason as Error | undefined;
    const e = new Error(reason?.message ?? 'aborted');
    e.name = reason?.name === 'TimeoutError' ? 'TimeoutError' : 'AbortError';
    return e;
  }
  return Object.assign(new Error(`request to ${url} failed: ${err.code ?? err.message}`), { cause: err });
}

function answerOf(res: IncomingMessage, url: string, signal: Signals): HttpAnswer {
  const status = res.statusCode ?? 0;
  let used = false;
  const take = () => {
    if (used) throw new TypeError('body already read');
    used = true;
    return res;
  };
  const collect = async (): Promise<string> => {
    const chunks: Buffer[] = [];
    try {
      for await (const c of take()) chunks.push(c as Buffer);
    } catch (err) {
      throw failure(url, err as Error, signal);
    }
    return Buffer.concat(chunks).toString('utf8');
  };
  const body: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]: async function* () {
      try {
        for await (const c of take()) yield c as Uint8Array;
      } catch (err) {
        throw failure(url, err as Error, signal);
      }
    },
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

function once(url: URL, headers: Record<string, string>, payload: Buffer, signal: Signals): Promise<{ answer?: HttpAnswer; retry?: boolean; error?: Error }> {
  return new Promise((resolve) => {
    const req = httpRequest({
      host: url.hostname, port: url.port || 80, path: `${url.pathname}${url.search}`, method: 'POST', agent,
      headers: { ...headers, 'content-length': String(payload.length) },
    });
    let res: IncomingMessage | undefined;
    // Until the answer arrives a signal ends the request; after, its body (a client that left, a deadline).
    const stop = onAnyAbort(signal, () => (res ?? req).destroy(failure(url.href, new Error('aborted'), signal)));
    req.once('response', (r) => {
      res = r;
      r.once('close', stop);
      resolve({ answer: answerOf(r, url.href, signal) });
    });
    req.once('error', (err: Error & { code?: string }) => {
      if (res) return; // the body's own error is the reader's
      stop();
      // A kept-alive socket the upstream closed just before this request was written: it saw nothing; once more.
      const stale = req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE') && !abortedOf(signal);
      resolve(stale ? { retry: true } : { error: failure(url.href, err, signal) });
    });
    if (abortedOf(signal)) req.destroy(failure(url.href, new Error('aborted'), signal));
    else req.end(payload);
  });
}

/** POSTs a JSON body; resolves when the answer's headers arrive. The signal cancels the call and its body. */
export async function postJson(url: string, body: unknown, signal: Signals, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const target = new URL(url);
  const payload = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const all = { ...headers, 'content-type': 'application/json' };
  for (let attempt = 0; ; attempt++) {
    const r = await once(target, all, payload, signal);
    if (r.answer) return r.answer;
    if (!r.retry || attempt > 0) throw r.error ?? failure(url, Object.assign(new Error('connection reset'), { code: 'ECONNRESET' }), signal);
  }
}

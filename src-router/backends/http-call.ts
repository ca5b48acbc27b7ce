/**
 * The request path's one HTTP client for JSON calls to engines, other nodes and static-route endpoints (issue #14):
 * `node:http` over a keep-alive agent, one write per request, the answer's body as the socket's own stream. WHATWG
 * `fetch` costs about 1.5 ms of waiting and a web-stream pipeline per call on loopback; this is what a proxy needs.
 * What ends a call is one `CallEnd` (client, deadline, cancel), not AbortSignals. Uploads (multipart transcriptions)
 * keep `fetch`: they are rare and large.
 */
import { Agent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
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

function answerOf(res: IncomingMessage, url: string, end: CallEnd): HttpAnswer {
  const status = res.statusCode ?? 0;
  let used = false;
  const take = () => {
    if (used) throw new TypeError('body already read');
    used = true;
    return res;
  };
  const collect = (): Promise<string> => {
    const r = take();
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.once('end', () => resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8')));
      r.once('error', (err) => reject(failure(url, err, end)));
      // Destroyed before its end (a signal, a reset) without an error event: fail rather than wait forever.
      r.once('close', () => {
        if (!r.complete) reject(failure(url, Object.assign(new Error('the answer broke off'), { code: 'ECONNRESET' }), end));
      });
    });
  };
  const body: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]: async function* () {
      try {
        for await (const c of take()) yield c as Uint8Array;
      } catch (err) {
        throw failure(url, err as Error, end);
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

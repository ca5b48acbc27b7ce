/**
 * The fault suite's clients: one request with a bounded wait that never throws (what arrived, classified later by
 * faults-count.ts), marked chat bodies, and raw-socket readers that stop reading their stream.
 */
import { randomBytes } from 'node:crypto';
import { type Agent, type IncomingHttpHeaders, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { markerText, type RawAnswer } from './faults-count';

export interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Give up after this long (counted as a hang when nothing, or not everything, arrived). */
  timeoutMs: number;
  agent?: Agent | false;
  stream?: boolean;
  /** Keep at most this many characters of the body (default 1 MB). */
  keep?: number;
  /** The request line's target when it is not the URL's path in origin form (`http://host/v1/models`, `/x/../v1`). */
  target?: string;
}

export type CallAnswer = RawAnswer & { headers: IncomingHttpHeaders; ms: number };

/** Sends one request; resolves with whatever arrived (never rejects). */
export function call(url: string, o: CallOptions): Promise<CallAnswer> {
  const t0 = performance.now();
  const keep = o.keep ?? 1_000_000;
  return new Promise((resolve) => {
    let status: number | null = null;
    let headers: IncomingHttpHeaders = {};
    let body = '';
    let ended = false;
    let timedOut = false;
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status, headers, body, ended, timedOut, stream: o.stream === true, ms: performance.now() - t0 });
    };
    const data = o.body === undefined ? undefined : Buffer.isBuffer(o.body) ? o.body : Buffer.from(o.body);
    const req = request(
      url,
      {
        method: o.method ?? (data ? 'POST' : 'GET'),
        agent: o.agent,
        ...(o.target === undefined ? {} : { path: o.target }),
        headers: {
          ...(data ? { 'content-type': 'application/json', 'content-length': String(data.length) } : {}),
          ...o.headers,
        },
      },
      (res) => {
        status = res.statusCode ?? null;
        headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          if (body.length < keep) body += c;
        });
        res.on('end', () => {
          ended = true;
          finish();
        });
        res.on('error', finish);
        res.on('close', finish);
      },
    );
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error('client time-out'));
      finish();
    }, o.timeoutMs);
    req.on('error', finish);
    req.end(data);
  });
}

/** Unique marker ids for one run: `<prefix><n in base 36><random>`, lowercase letters and digits only. */
export function markers(prefix: string): () => string {
  const salt = randomBytes(3).toString('hex');
  let n = 0;
  return () => `${prefix}${(n++).toString(36)}x${salt}`;
}

/** A chat body whose prompt starts with the request's marker (what the sim records in its seen ring). */
export const markedChat = (
  model: string,
  marker: string,
  maxTokens: number,
  stream = false,
  extra: Record<string, unknown> = {},
) => ({
  model,
  messages: [{ role: 'user', content: `${markerText(marker)} hello there` }],
  max_tokens: maxTokens,
  stream,
  ...extra,
});

export const postChat = (baseUrl: string, body: Record<string, unknown>, timeoutMs: number, agent?: Agent | false) =>
  call(`${baseUrl}/v1/chat/completions`, {
    body: JSON.stringify(body),
    timeoutMs,
    agent,
    stream: body.stream === true,
  });

/**
 * A client that sends a request on a raw socket (a streamed chat by default; any JSON POST by `path`) and never reads
 * (paused): the kernel buffers fill and the node's writes stop draining. `resume()` reads what is buffered and waits
 * (bounded) for the connection to end.
 */
export class StalledReader {
  private readonly socket: Socket;
  private text = '';
  private bytes = 0;
  private closed = false;
  private ended = false;
  private readonly connected: Promise<void>;

  constructor(baseUrl: string, body: Record<string, unknown>, path = '/v1/chat/completions') {
    const { hostname, port } = new URL(baseUrl);
    const payload = JSON.stringify(body);
    this.socket = connect(Number(port), hostname);
    this.socket.on('error', () => {});
    this.socket.on('close', () => (this.closed = true));
    this.socket.on('end', () => (this.ended = true));
    this.connected = new Promise((resolve) => {
      this.socket.once('connect', () => {
        this.socket.pause();
        this.socket.write(
          `POST ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
        );
        resolve();
      });
      this.socket.once('close', () => resolve());
    });
  }

  ready(): Promise<void> {
    return this.connected;
  }

  /** Whether the node closed the connection (seen without reading: the socket's end or close). */
  get cutOff(): boolean {
    return this.closed || this.ended;
  }

  /**
   * Reads on. Resolves with what the client got: `cut` when the connection ended (after what was buffered) without
   * `[DONE]`; still open after `waitMs` means the node did not cut it (`timedOut`).
   */
  async resume(waitMs: number): Promise<RawAnswer & { stillOpen: boolean }> {
    const socket = this.socket;
    socket.setEncoding('latin1');
    const keepTail = (c: string) => {
      this.bytes += c.length;
      // Only the head (status line) and the tail (the end of the stream) matter; the middle is thousands of tokens.
      this.text =
        this.text.length < 4096 ? this.text + c : this.text.slice(0, 4096) + (this.text.slice(4096) + c).slice(-8192);
    };
    socket.on('data', keepTail);
    socket.resume();
    const deadline = Date.now() + waitMs;
    while (!this.closed && !this.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    const stillOpen = !this.closed && !this.ended;
    socket.destroy();
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(this.text);
    const status = m ? Number(m[1]) : null;
    const bodyStart = this.text.indexOf('\r\n\r\n');
    const body = bodyStart < 0 ? '' : this.text.slice(bodyStart + 4);
    // A complete chunked answer ends with the zero-size chunk, one with a length has all its bytes; else it ended early.
    const length = /\r\ncontent-length: (\d+)\r\n/i.exec(this.text.slice(0, Math.max(0, bodyStart)));
    const headBytes = bodyStart + 4;
    const ended = length ? this.bytes - headBytes === Number(length[1]) : /\r\n0\r\n\r\n$/.test(this.text);
    return { status, body, ended, timedOut: stillOpen, stream: !length, stillOpen };
  }

  destroy(): void {
    this.socket.destroy();
  }
}

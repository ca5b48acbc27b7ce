import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallEnd } from '../../src-router/backends/call-end';
import { DRAIN_MS, getUrl } from '../../src-router/backends/http-call';
import { eventually } from '../support/node-harness';

// Issue #14: an answer's body as the request path reads it (`HttpAnswer.body`), on a real loopback server. What one
// read of the socket brought comes as one piece (an engine writes an HTTP chunk per SSE event); a body that breaks
// off fails after what came before it; a reader that stops early closes the answer, one that has all it wants
// (`drainRest`, a stream's [DONE]) lets it end and keeps the connection; a reader that falls behind pauses the socket
// instead of buffering the whole answer.

let server: Server;
let base = '';
const handlers = new Map<string, (res: ServerResponse, socket: Socket) => void>();

beforeAll(async () => {
  server = createServer((req, res) => handlers.get(req.url ?? '')?.(res, req.socket));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const event = (i: number) => `data: {"i":${i}}\n\n`;

/** An SSE answer at `path`, its head written, then `open(res)`; resolves with the time the server saw it closed. */
function sseAt(path: string, open: (res: ServerResponse) => void): Promise<number> {
  return new Promise((resolve) => {
    handlers.set(path, (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.once('close', () => resolve(performance.now()));
      open(res);
    });
  });
}
const text = (pieces: Uint8Array[]) => pieces.map((p) => Buffer.from(p).toString()).join('');

describe('an answer body read by the request path', () => {
  it('hands over the HTTP chunks of one write together, in order, then ends', async () => {
    // Twenty HTTP chunks corked into one write: they reach the client in one read.
    handlers.set('/corked', (res, socket) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      socket.cork();
      for (let i = 0; i < 20; i++) res.write(event(i));
      res.end();
      socket.uncork();
    });
    const answer = await getUrl(`${base}/corked`, new CallEnd(undefined, 5_000));
    const pieces: Uint8Array[] = [];
    for await (const p of answer.body!) pieces.push(p);
    expect(text(pieces)).toBe(Array.from({ length: 20 }, (_, i) => event(i)).join(''));
    // One write of about 600 bytes on loopback is one read: one piece, not one per event.
    expect(pieces).toHaveLength(1);
  });

  it('a body that breaks off fails, after what arrived before it', async () => {
    handlers.set('/broken', (res, socket) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(event(1), () => setTimeout(() => socket.destroy(), 50));
    });
    const answer = await getUrl(`${base}/broken`, new CallEnd(undefined, 5_000));
    const pieces: Uint8Array[] = [];
    const read = (async () => {
      for await (const p of answer.body!) pieces.push(p);
    })();
    await expect(read).rejects.toThrow(/request to .*\/broken failed/);
    expect(text(pieces)).toBe(event(1));
  });

  it('a whole body read after it broke off fails with that error instead of passing on what arrived', async () => {
    let broken!: () => void;
    const serverBroke = new Promise<void>((r) => (broken = r));
    handlers.set('/cut', (res, socket) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":', () =>
        setTimeout(() => {
          socket.destroy();
          broken();
        }, 20),
      );
    });
    const answer = await getUrl(`${base}/cut`, new CallEnd(undefined, 5_000));
    await serverBroke;
    await new Promise((r) => setTimeout(r, 50)); // the break has reached the client before the body is read
    await expect(answer.text()).rejects.toThrow(/request to .*\/cut failed: ECONNRESET/);
  });

  it('a body whose call ended before it was first read fails at once instead of waiting forever', async () => {
    handlers.set('/slow', (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(event(1));
    });
    const end = new CallEnd(undefined, 5_000);
    const answer = await getUrl(`${base}/slow`, end);
    // The client left between the answer's head and the relay's first read: the response is destroyed and closed.
    end.cancel();
    await new Promise((r) => setImmediate(r));
    const read = (async () => {
      for await (const _ of answer.body!) void _;
    })();
    await expect(read).rejects.toThrow(/aborted/);
  });

  it('a reader that stops early closes the answer: the server sees its response closed', async () => {
    const serverSawClose = sseAt('/endless', (res) => {
      let i = 0;
      const timer = setInterval(() => res.write(event(i++)), 5);
      res.once('close', () => clearInterval(timer));
    });
    const answer = await getUrl(`${base}/endless`, new CallEnd(undefined, 5_000));
    let seen = '';
    for await (const p of answer.body!) {
      seen += Buffer.from(p).toString();
      if (seen.includes(event(2))) break;
    }
    await serverSawClose;
  });

  it('a reader that has all it wants lets the body end on its own: the connection stays open and serves the next call', async () => {
    // A server of its own: the only connection to its origin is the stream's.
    const ports: number[] = [];
    let finished!: (ok: boolean) => void;
    const serverEnd = new Promise<boolean>((r) => (finished = r));
    const own = createServer((req, res) => {
      ports.push(req.socket.remotePort!);
      if (req.url === '/port') return res.end('ok');
      // An engine ends its stream in a write of its own after [DONE] (llama-server does): the end comes in a later read.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.once('close', () => finished(res.writableFinished));
      res.write(`${event(1)}data: [DONE]\n\n`, () => setTimeout(() => res.end(), 50));
    });
    await new Promise<void>((r) => own.listen(0, '127.0.0.1', r));
    const ownBase = `http://127.0.0.1:${(own.address() as AddressInfo).port}`;
    try {
      const answer = await getUrl(`${ownBase}/late-end`, new CallEnd(undefined, 5_000));
      let seen = '';
      for await (const p of answer.body!) {
        seen += Buffer.from(p).toString();
        if (seen.includes('[DONE]')) {
          answer.drainRest!();
          break;
        }
      }
      // The server finished its answer (a reader that stopped would have closed it first)...
      expect(await serverEnd).toBe(true);
      // ...and the connection serves the next call (a cut-off one would have gone with the answer).
      await eventually(
        async () => {
          await (await getUrl(`${ownBase}/port`, new CallEnd(undefined, 5_000))).text();
          return ports.at(-1) === ports[0];
        },
        { what: "a call on the stream's connection" },
      );
    } finally {
      own.closeAllConnections();
      await new Promise<void>((r) => own.close(() => r()));
    }
  });

  it('a body that does not end after its reader had all it wanted is cut off after DRAIN_MS', async () => {
    const serverSawClose = sseAt('/never-ends', (res) => res.write('data: [DONE]\n\n'));
    const answer = await getUrl(`${base}/never-ends`, new CallEnd(undefined, 30_000));
    const it = answer.body![Symbol.asyncIterator]();
    await it.next();
    const drainedAt = performance.now();
    answer.drainRest!();
    await it.return!();
    const endedAt = await serverSawClose;
    // Not at once (the body was given its time to end), and not at the call's own 30 s deadline.
    expect(endedAt - drainedAt).toBeGreaterThanOrEqual(DRAIN_MS - 50);
    expect(endedAt - drainedAt).toBeLessThan(20_000);
  });

  it('a read still waiting when the reader has all it wants ends, and so does every later one', async () => {
    const serverSawClose = sseAt('/quiet', (res) => res.write(event(1)));
    const answer = await getUrl(`${base}/quiet`, new CallEnd(undefined, 30_000));
    const it = answer.body![Symbol.asyncIterator]();
    expect(Buffer.from((await it.next()).value!).toString()).toBe(event(1));
    const waiting = it.next();
    answer.drainRest!();
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(await it.next()).toEqual({ value: undefined, done: true });
    await serverSawClose; // cut off after DRAIN_MS: the server sends nothing more
  });

  it('a reader that falls behind pauses the socket: the server is held back, and the whole body still arrives', async () => {
    // Far more than the kernel's socket buffers hold (a few MB on loopback).
    const total = 32 * 1024 * 1024;
    let sent = 0;
    handlers.set('/large', (res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const piece = Buffer.alloc(64 * 1024, 120);
      const pump = () => {
        while (sent < total) {
          sent += piece.length;
          if (!res.write(piece)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
    const answer = await getUrl(`${base}/large`, new CallEnd(undefined, 60_000));
    const it = answer.body![Symbol.asyncIterator]();
    const first = await it.next();
    let received = first.value!.length;
    // The reader takes nothing more: the server stops short of the end (a reader that buffered everything would let
    // it send all of it), then, read on, the rest arrives.
    let last = -1;
    await eventually(
      async () => {
        const stalled = sent === last && sent < total;
        last = sent;
        return stalled;
      },
      { what: 'the server held back by the reader', everyMs: 300, timeoutMs: 20_000 },
    );
    expect(sent).toBeLessThan(total);
    for (let r = await it.next(); !r.done; r = await it.next()) received += r.value.length;
    expect(received).toBe(total);
  });
});

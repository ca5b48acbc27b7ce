import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CallEnd } from '../../src-router/backends/call-end';
import { postJson } from '../../src-router/backends/http-call';
import { connectRefused } from '../../src-router/lending/master-client';

// Issue #14: the request path's client over kept-alive connections. A connection the upstream closes as a request is
// written on it (its keep-alive ran out) saw nothing of that request: the call goes once more, on a new connection.
// A connection that breaks before its first answer may have run the request: never again (a job must not run twice).

const answer = (body: string) =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;

let server: Server | undefined;
const sockets = new Set<Socket>();
afterEach(
  () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      sockets.clear();
      if (server) server.close(() => r());
      else r();
    }),
);

/** A raw HTTP/1.1 server: `onRequest(socket, nth request on this connection, nth connection)`. */
async function rawServer(onRequest: (socket: Socket, nth: number, conn: number) => void): Promise<string> {
  let conns = 0;
  server = createServer((socket) => {
    sockets.add(socket);
    const conn = ++conns;
    let nth = 0;
    let seen = '';
    socket.on('data', (d) => {
      seen += d.toString();
      // One request per complete head + body (the bodies here are small JSON with a content-length).
      for (;;) {
        const head = seen.indexOf('\r\n\r\n');
        if (head < 0) return;
        const len = Number(/content-length: (\d+)/i.exec(seen.slice(0, head))?.[1] ?? 0);
        if (seen.length < head + 4 + len) return;
        seen = seen.slice(head + 4 + len);
        onRequest(socket, ++nth, conn);
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/v1/chat/completions`;
}

describe('the request path client on kept-alive connections', () => {
  it('a request written as the upstream closes its kept-alive connection goes once more, on a new one', async () => {
    const seen: string[] = [];
    const url = await rawServer((socket, nth, conn) => {
      seen.push(`${conn}.${nth}`);
      // The first connection answers once, then closes as the next request reaches it, answering nothing.
      if (conn === 1 && nth === 2) return void socket.end();
      socket.write(answer(`{"n":"${conn}.${nth}"}`));
    });
    expect(await (await postJson(url, { a: 1 }, new CallEnd(undefined, 5_000))).json()).toEqual({ n: '1.1' });
    // The connection is idle again once the client has looked at it (undici checks an idle connection before reuse).
    await new Promise((r) => setTimeout(r, 20));
    const second = await postJson(url, { a: 2 }, new CallEnd(undefined, 5_000));
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ n: '2.1' });
    expect(seen).toEqual(['1.1', '1.2', '2.1']);
  });

  it('a new connection that breaks before its answer fails the call, and the request is not sent again', async () => {
    let requests = 0;
    const url = await rawServer((socket) => {
      requests++;
      socket.end();
    });
    await expect(postJson(url, { a: 1 }, new CallEnd(undefined, 5_000))).rejects.toThrow(/request to .* failed/);
    expect(requests).toBe(1);
  });

  it('issue #25: a second try that finds the port refusing still fails as a reset: the first may have reached the upstream', async () => {
    // A node shutting down: it reads the second request, stops listening and closes the connection as undici would see
    // a stale one. The request may have run there, so the call must not read as one that never reached it.
    let conns = 0;
    const url = await rawServer((socket, nth, conn) => {
      conns = conn;
      if (nth === 1) return void socket.write(answer('{"n":1}'));
      server!.close();
      socket.end();
    });
    expect(await (await postJson(url, { a: 1 }, new CallEnd(undefined, 5_000))).json()).toEqual({ n: 1 });
    await new Promise((r) => setTimeout(r, 20));
    const err = await postJson(url, { a: 2 }, new CallEnd(undefined, 5_000)).then(
      () => null,
      (e: Error) => e,
    );
    expect(err).not.toBeNull();
    expect(conns).toBe(1);
    expect(connectRefused(err)).toBe(false);
    expect((err as { cause?: { code?: string } }).cause?.code).toBe('ECONNRESET');
    server = undefined;
  });

  it('a call whose deadline passes before its answer fails with a TimeoutError', async () => {
    const url = await rawServer(() => {}); // never answers
    const end = new CallEnd(undefined, 200);
    await expect(postJson(url, { a: 1 }, end)).rejects.toMatchObject({ name: 'TimeoutError' });
  });
});

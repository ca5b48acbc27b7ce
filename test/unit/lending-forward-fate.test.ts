import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import { forwardToHelper, masterClient } from '../../src-router/lending/master-client';
import type { RelayRequest } from '../../src-router/lending/ports';

// Issue #25: the master's forward to a helper tells a definite non-delivery (no connection) from an unknown fate
// (the request may have reached the helper): only the first is a refusal the owner may run again, and a broken
// answer is never an empty 200.
const req: RelayRequest = {
  requestId: 'r1',
  owner: { nodeId: 'o', model: 'a' },
  helper: { nodeId: 'h', model: 'b' },
  endpoint: 'chat',
  json: { messages: [] },
};

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

/** A raw helper: `onRequest(socket)` once a whole request head and body arrived. */
async function helper(onRequest: (socket: Socket) => void): Promise<string> {
  server = createServer((socket) => {
    sockets.add(socket);
    let seen = '';
    socket.on('data', (d) => {
      seen += d.toString('latin1');
      const head = seen.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(seen)?.[1] ?? 0);
      if (head >= 0 && seen.length >= head + 4 + length) onRequest(socket);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
}

/** A whole HTTP/1.1 answer as a raw helper writes it. */
const raw = (status: string, type: string, body: string, headers: Record<string, string> = {}) =>
  `HTTP/1.1 ${status}\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}content-type: ${type}\r\ncontent-length: ${body.length}\r\n\r\n${body}`;

const forward = (url: string, timeoutMs = 5_000) =>
  forwardToHelper(url, 'token', req, new AbortController().signal, timeoutMs);

describe('issue #25: the forward to a helper', () => {
  it('no listener (connection refused): a refusal, helper_unreachable', async () => {
    expect(await forward(`http://127.0.0.1:${await freePort()}`)).toMatchObject({
      kind: 'refused',
      reason: 'helper_unreachable',
    });
  });

  it('reset after the request was sent: unknown, not a refusal', async () => {
    const url = await helper((s) => s.resetAndDestroy());
    expect(await forward(url)).toMatchObject({ kind: 'unknown' });
  });

  it("no answer within the forward's time: unknown", async () => {
    const url = await helper(() => {});
    expect(await forward(url, 300)).toMatchObject({ kind: 'unknown' });
  });

  it('an answer cut short: unknown, never an empty 200', async () => {
    const url = await helper((s) => {
      s.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"id":');
      setImmediate(() => s.destroy());
    });
    expect(await forward(url)).toMatchObject({ kind: 'unknown' });
  });

  it('the helper already has the request (409 duplicate_request): unknown, resolved at the helper', async () => {
    const body = '{"error":{"message":"already here","type":"invalid_request_error","code":"duplicate_request"}}';
    const url = await helper((s) => s.end(raw('409 Conflict', 'application/json', body)));
    expect(await forward(url)).toMatchObject({ kind: 'unknown' });
  });

  it('a gateway between master and helper answers 504 on its own time-out (no x-routerdesk-node): unknown, the helper may still run it', async () => {
    const body = '<html><body>504 Gateway Time-out</body></html>';
    const url = await helper((s) => s.end(raw('504 Gateway Time-out', 'text/html', body)));
    expect(await forward(url)).toMatchObject({ kind: 'unknown' });
  });

  it("the helper's own error answer (it names its node): a refusal, forward_failed", async () => {
    const body = '{"error":{"message":"engine failed","type":"server_error","code":"engine_error"}}';
    const url = await helper((s) =>
      s.end(raw('502 Bad Gateway', 'application/json', body, { 'x-routerdesk-node': 'h' })),
    );
    expect(await forward(url)).toMatchObject({ kind: 'refused', reason: 'forward_failed' });
  });

  it('a whole answer: answered', async () => {
    const body = '{"id":"x"}';
    const url = await helper((s) => s.end(raw('200 OK', 'application/json', body)));
    expect(await forward(url)).toEqual({ kind: 'answered', status: 200, body: { id: 'x' } });
  });
});

describe("issue #25: the owner's relay through the master", () => {
  const relay = (url: string) =>
    masterClient(url, 'token', { eventTimeoutMs: 5_000, relayTimeoutMs: 5_000 }).relay(
      req,
      new AbortController().signal,
    );

  it('a gateway between owner and master answers 504 on its own time-out: unknown, resolved at the helper before the owner runs it', async () => {
    const body = '<html><body>504 Gateway Time-out</body></html>';
    const url = await helper((s) => s.end(raw('504 Gateway Time-out', 'text/html', body)));
    expect(await relay(url)).toMatchObject({ kind: 'unknown' });
  });

  it('a 200 that is not a relay answer (something between answered): unknown, not a refusal the owner runs again', async () => {
    const body = '<html>captive portal</html>';
    const url = await helper((s) => s.end(raw('200 OK', 'text/html', body)));
    expect(await relay(url)).toMatchObject({ kind: 'unknown' });
  });

  it('the master refuses the relay before forwarding it (400): a refusal the owner runs', async () => {
    const body = '{"error":{"message":"requestId: required","type":"invalid_request_error","code":"invalid_request"}}';
    const url = await helper((s) => s.end(raw('400 Bad Request', 'application/json', body)));
    expect(await relay(url)).toMatchObject({ kind: 'refused', reason: 'forward_failed' });
  });
});

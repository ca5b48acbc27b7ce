import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyReply } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { clientGone } from '../../src-router/http/client-gone';

// Issue #14: a request's client going away, told by one listener on the real response; an AbortSignal only on demand.
// A real loopback server and client: the client leaves (its socket destroyed) or is answered.

const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A server whose handler hands out each response; one request to it whose socket the test can destroy. */
async function oneRequest() {
  let onRes!: (res: ServerResponse) => void;
  const got = new Promise<ServerResponse>((r) => (onRes = r));
  const server = createServer((_req, res) => onRes(res));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const req = request({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/' });
  req.on('error', () => {});
  req.end();
  const res = await got;
  return { res, gone: clientGone({ raw: res } as FastifyReply), leave: () => req.destroy() };
}

const closed = (res: ServerResponse) => new Promise<void>((r) => (res.destroyed ? r() : res.once('close', () => r())));

describe('clientGone', () => {
  it('is told when the client leaves before its answer: hooks run, a signal asked for aborts', async () => {
    const { res, gone, leave } = await oneRequest();
    const told: string[] = [];
    gone.onAbort(() => told.push('hook'));
    const signal = gone.signal;
    expect(gone.signal).toBe(signal);
    expect(gone.aborted).toBe(false);
    leave();
    await closed(res);
    expect(gone.aborted).toBe(true);
    expect(told).toEqual(['hook']);
    expect(signal.aborted).toBe(true);
    // Asked after it left: at once.
    gone.onAbort(() => told.push('late'));
    expect(told).toEqual(['hook', 'late']);
  });

  it('a finished answer is not a client that left; an unsubscribed hook never runs', async () => {
    const { res, gone } = await oneRequest();
    const told: string[] = [];
    gone.onAbort(() => told.push('dropped'))();
    gone.onAbort(() => told.push('kept'));
    res.end('ok');
    await closed(res);
    expect(gone.aborted).toBe(false);
    expect(told).toEqual([]);
    expect(gone.signal.aborted).toBe(false);
  });
});

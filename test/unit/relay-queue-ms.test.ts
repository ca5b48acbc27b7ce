import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { forwardToHelper, masterClient } from '../../src-router/lending/master-client';
import type { RelayRequest } from '../../src-router/lending/ports';

// Issue #15: a lent answer's queue time is its wait at the owner plus its wait at the helper. The helper's wait comes
// in its worker answer's x-routerdesk-queue-ms and travels back through the master's relay as a header of the relay
// answer, never in its body (an older owner parses that body strictly). A newer master's relay answer with a field
// this build does not know still parses (peer reads strip unknown keys).

const req: RelayRequest = {
  requestId: 'r1',
  owner: { nodeId: 'owner', model: 'a' },
  helper: { nodeId: 'helper', model: 'b' },
  endpoint: 'chat',
  json: { messages: [] },
};
const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const json = (res: ServerResponse, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

describe('the helper wait of a lent answer', () => {
  it('the master reads it from the helper worker answer', async () => {
    const helper = await serve((_q, res) => json(res, { choices: [] }, { 'x-routerdesk-queue-ms': '850' }));
    expect(await forwardToHelper(helper, 't', req, new AbortController().signal, 5_000)).toEqual({
      kind: 'answered',
      status: 200,
      body: { choices: [] },
      queueMs: 850,
    });
    const older = await serve((_q, res) => json(res, { choices: [] }));
    expect(await forwardToHelper(older, 't', req, new AbortController().signal, 5_000)).toEqual({
      kind: 'answered',
      status: 200,
      body: { choices: [] },
    });
  });

  it('the owner reads it from the relay answer header; a newer master body field is stripped', async () => {
    const master = await serve((q, res) => {
      if (q.url === '/router/v1/node/offload/relay')
        json(
          res,
          { kind: 'answered', status: 200, body: { ok: 1 }, via: 'newer-master' },
          { 'x-routerdesk-queue-ms': '120' },
        );
    });
    const port = masterClient(master, 't', { eventTimeoutMs: 5_000, relayTimeoutMs: 5_000 });
    expect(await port.relay(req, new AbortController().signal)).toEqual({
      kind: 'answered',
      status: 200,
      body: { ok: 1 },
      queueMs: 120,
    });
  });
});

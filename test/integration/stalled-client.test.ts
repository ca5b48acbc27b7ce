import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startNode, type TestNode } from '../support/node-harness';

// Issue #9: a client that stops reading a stream cannot hold its lane: after server.write_timeout it is cut off,
// its engine request is cancelled and the request behind it is served.
describe('a client that stops reading its stream', () => {
  let node: TestNode;
  const simStats = async () => {
    const port = (
      await node.console<{ lanes: { lane: string; port: number | null }[] }>('/router/v1/console/lanes')
    ).lanes.find((l) => l.lane === 'text')!.port!;
    return (await (await fetch(`http://127.0.0.1:${port}/sim/stats`)).json()) as {
      cancelled: number;
      active: number;
      completed: number;
    };
  };

  beforeAll(async () => {
    node = await startNode({
      config: { server: { write_timeout: '1s' } },
      models: {
        chatty: {
          name: 'chatty',
          backend: 'sim',
          capabilities: ['text'],
          parallel: 1,
          sim: { load_time: '50ms', token_time: '0ms' },
        },
      },
    });
  });
  afterAll(() => node?.stop());

  it('is cut off after write_timeout; its engine request is cancelled and the next client is served', async () => {
    const chat = (maxTokens: number, stream: boolean) =>
      JSON.stringify({ model: 'chatty', messages: [{ role: 'user', content: 'talk' }], max_tokens: maxTokens, stream });
    expect(
      (
        await fetch(`${node.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: chat(1, false),
        })
      ).status,
    ).toBe(200);
    const before = await simStats();
    const { port, hostname } = new URL(node.url);
    const body = chat(5_000_000, true);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => {});
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.pause(); // never reads: the kernel buffers fill and the router's writes stop draining
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await eventually(async () => (await simStats()).active === 1, { what: 'the stalled stream at the engine' });
    // Another client queues behind it on the one-at-a-time engine, and is served once the stalled one is cut off.
    const next = fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: chat(4, false),
    });
    await eventually(() => node.output().includes('client_stalled'), {
      what: 'the stalled client cut off',
      timeoutMs: 20_000,
    });
    expect((await next).status).toBe(200);
    await eventually(async () => (await simStats()).cancelled === before.cancelled + 1, {
      what: 'the engine saw the cancel',
    });
    // Nothing of the stalled request is left on the node.
    await eventually(
      async () =>
        (await node.console<{ lanes: { lane: string; inflight: number }[] }>('/router/v1/console/lanes')).lanes.every(
          (l) => l.inflight === 0,
        ),
      { what: 'the lane released' },
    );
    socket.destroy();
  });
});

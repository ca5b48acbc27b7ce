import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type TestNode } from '../support/node-harness';
import { nodeWithStaticUpstream } from '../support/static-upstream';

// Issue #14: an engine ends a stream in a write of its own after `data: [DONE]` (llama-server's chunked writer does),
// so that end often comes in a later read than [DONE]. The node relays [DONE] to its client at once and lets the
// engine's answer end on its own: cutting it off closed the engine's connection, and every stream then cost a new
// one. A stream's head goes out with its first events when they come together, and at once when they do not. A real
// node, a real loopback upstream that records which connection each request came on, the openai client and fetch.
describe("a relayed stream: its engine's answer left to end, its head sent at once (issue #14)", () => {
  let node: TestNode;
  let close: (() => Promise<void>) | undefined;
  /** The connection (client port) of each chat request the upstream saw. */
  const ports: number[] = [];
  const streamEnds: boolean[] = [];
  /** Lets the upstream's held stream send its events (the one asked with the prompt 'hold'). */
  let release: () => void = () => {};

  const chunk = (content: string | null, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }] })}\n\n`;
  const answer = JSON.stringify({
    id: 'c2',
    object: 'chat.completion',
    created: 1,
    model: 'up',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  });

  beforeAll(async () => {
    ({ node, close } = await nodeWithStaticUpstream((req, res: ServerResponse) => {
      const body: Buffer[] = [];
      req.on('data', (c: Buffer) => body.push(c));
      req.on('end', () => {
        if (!req.url?.endsWith('/chat/completions')) return res.end();
        const request = JSON.parse(Buffer.concat(body).toString()) as {
          stream?: boolean;
          messages: { content: string }[];
        };
        if (!request.stream) {
          ports.push(req.socket.remotePort!);
          return res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        if (request.messages[0].content === 'hold') {
          // The head now, the events only once the test saw the head arrive.
          res.flushHeaders();
          release = () => res.end(`${chunk('late', null)}${chunk(null, 'stop')}data: [DONE]\n\n`);
          return;
        }
        ports.push(req.socket.remotePort!);
        res.once('close', () => streamEnds.push(res.writableFinished));
        res.write(`${chunk('hi', null)}${chunk(null, 'stop')}data: [DONE]\n\n`, () => setTimeout(() => res.end(), 100));
      });
    }));
  });
  afterAll(() => close?.());

  it('the client gets its whole stream, the engine finishes its answer, and its connection serves the next request', async () => {
    const client = new OpenAI({ baseURL: `${node.url}/v1`, apiKey: 'x', maxRetries: 0, timeout: 10_000 });
    const stream = await client.chat.completions.create({
      model: 'up',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('hi');
    // The engine's answer ended as the engine ended it: finished, not closed under it.
    await eventually(() => streamEnds.length === 1, { what: 'the upstream answer to end' });
    expect(streamEnds).toEqual([true]);
    // The node's next request to the engine comes on the stream's connection (a cut-off one went with the answer).
    await eventually(
      async () => {
        await client.chat.completions.create({ model: 'up', messages: [{ role: 'user', content: 'again' }] });
        return ports.at(-1) === ports[0];
      },
      { what: "a request on the stream's connection" },
    );
  });

  it('a stream whose first events have not come yet gets its head at once', async () => {
    // The upstream sends its events only after this client has the head: a node that held the head for the first
    // events would never answer, and the call would fail at its deadline.
    const res = await fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(10_000),
      body: JSON.stringify({ model: 'up', messages: [{ role: 'user', content: 'hold' }], stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    release();
    const text = await res.text();
    expect(text).toContain('"content":"late"');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });
});

import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  AnswerTooLarge,
  errorText,
  fetchAnswer,
  SSE_EVENT_LIMIT,
  VIEW_LIMIT,
} from '../../src-router/backends/answer-limits';
import { CallEnd } from '../../src-router/backends/call-end';
import { getUrl } from '../../src-router/backends/http-call';
import { gatherDecisions } from '../../src-router/cluster/decision-gather';
import { NodeCallError, NodeClient } from '../../src-router/cluster/node-client';
import { forwardToHelper } from '../../src-router/lending/master-client';
import { readQueueComments } from '../../src-router/serve/forwarded-queue';
import { SseDataSplitter } from '../../src-router/serve/id-rewrite';
import { eventually } from '../support/node-harness';

// Issue #26 item 10: what a node reads from engines and peers is bounded. The SSE splitter's open line (a stream that
// never sends a newline), a body read whole, an error body, a peer's view: past each bound the read stops, the
// connection is closed and the reader gets `AnswerTooLarge`.

describe('issue #26 item 10: the SSE splitter', () => {
  it('splits events across chunks as before (CRLF, pieces of a line, many events in one chunk)', () => {
    const split = new SseDataSplitter(100);
    expect(split.push('data: {"a"')).toEqual([]);
    expect(split.push(':1}\r\n\r\ndata: {"b":2}\n\ndata: [DO')).toEqual(['{"a":1}', '{"b":2}']);
    expect(split.push('NE]\n\n')).toEqual(['[DONE]']);
    expect(split.push('data: last')).toEqual([]);
    expect(split.end()).toEqual(['last']);
  });

  it('a line may be as long as the bound, not longer: an open line past it throws, in one chunk or many', () => {
    const exact = new SseDataSplitter(100);
    const line = `data: ${'x'.repeat(94)}`;
    expect(line).toHaveLength(100);
    expect(exact.push(line.slice(0, 50))).toEqual([]);
    expect(exact.push(`${line.slice(50)}\n`)).toEqual(['x'.repeat(94)]);

    const endless = new SseDataSplitter(100);
    endless.push('data: {"choices":[{"delta":{"content":"');
    let thrown: unknown;
    try {
      for (let i = 0; i < 100; i++) endless.push('aaaaaaaaaa');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AnswerTooLarge);
    expect((thrown as AnswerTooLarge).message).toBe('sent an SSE line over 100 bytes; the rest was not read');
    expect((thrown as AnswerTooLarge).start).toMatch(/^data: \{"choices"/);

    // A whole line over the bound in one chunk, newline included.
    expect(() => new SseDataSplitter(100).push(`data: ${'y'.repeat(200)}\n\n`)).toThrow(AnswerTooLarge);
    expect(SSE_EVENT_LIMIT).toBe(16 * 1024 * 1024);
  });

  it('scans each chunk once: a line arriving in 2,000 pieces costs its length in newline searches, not its length squared', () => {
    const indexOf = String.prototype.indexOf;
    let scanned = 0;
    const spy = vi.spyOn(String.prototype, 'indexOf').mockImplementation(function (
      this: string,
      search: string,
      from?: number,
    ) {
      if (search === '\n') scanned += this.length - (from ?? 0);
      return indexOf.call(this, search, from);
    });
    try {
      const split = new SseDataSplitter();
      const piece = 'z'.repeat(1000);
      split.push('data: "');
      for (let i = 0; i < 2000; i++) split.push(piece);
      expect(split.push('"\n\n')).toEqual([`"${piece.repeat(2000)}"`]);
      // 2,000,010 characters in all; a rescan of the open line at every chunk would be about 2,000 times that.
      expect(scanned).toBeLessThan(2 * 2_000_010);
    } finally {
      spy.mockRestore();
    }
  });

  it("a forwarded stream's queue comments are bounded the same way: a line that never ends throws and closes the body", async () => {
    let returned = false;
    const body: AsyncIterable<string> = {
      [Symbol.asyncIterator]: () => ({
        next: async () => ({ value: 'q'.repeat(1024 * 1024), done: false }),
        return: async () => {
          returned = true;
          return { value: undefined, done: true };
        },
      }),
    };
    await expect(readQueueComments(body, () => undefined)).rejects.toBeInstanceOf(AnswerTooLarge);
    expect(returned).toBe(true);
  });
});

/** A loopback server answering each path with its handler. */
let server: Server;
let base = '';
const handlers = new Map<string, (res: ServerResponse) => void>();
/** Paths whose answer the client closed before it ended. */
const closed = new Set<string>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    res.on('close', () => {
      if (!res.writableFinished) closed.add(path);
    });
    handlers.get(path)?.(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
});

/** An answer that never ends: its head, `first`, then 64 KiB pieces as fast as they are taken, until it is closed. */
function endless(status: number, first: string) {
  return (res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.write(first);
    const piece = 'a'.repeat(64 * 1024);
    const more = () => {
      while (!res.destroyed && res.write(piece)) {
        /* until the socket is full */
      }
    };
    res.on('drain', more);
    more();
  };
}

describe('issue #26 item 10: bodies read whole', () => {
  it("the request path's client: past the bound it rejects with AnswerTooLarge and closes the connection", async () => {
    handlers.set('/endless', endless(200, '{"data":"'));
    const answer = await getUrl(`${base}/endless`, new CallEnd(undefined, 30_000));
    const err = await answer.text(256 * 1024).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AnswerTooLarge);
    expect((err as AnswerTooLarge).start.startsWith('{"data":"aaa')).toBe(true);
    await eventually(() => closed.has('/endless'), { what: 'the answer closed at the server' });
  });

  it("the request path's client: an answer within the bound reads whole", async () => {
    handlers.set('/small', (res) => res.end(JSON.stringify({ ok: 'x'.repeat(1000) })));
    const answer = await getUrl(`${base}/small`, new CallEnd(undefined, 30_000));
    expect(await answer.json(2000)).toEqual({ ok: 'x'.repeat(1000) });
  });

  it('an error body is read for its message up to 64 KiB: its start, said to be cut off, and the connection closed', async () => {
    handlers.set('/error', endless(500, '{"error":{"message":"'));
    const answer = await getUrl(`${base}/error`, new CallEnd(undefined, 30_000));
    const text = await errorText(answer);
    expect(text).toMatch(/^\{"error":\{"message":"a+… \(an error body over 64 KiB, cut off\)$/);
    expect(text.length).toBeLessThan(300);
    await eventually(() => closed.has('/error'), { what: 'the error answer closed at the server' });
  });

  it('a fetch answer read through fetchAnswer is bounded the same way', async () => {
    handlers.set('/fetched', endless(200, '['));
    const err = await fetchAnswer(await fetch(`${base}/fetched`))
      .json(128 * 1024)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AnswerTooLarge);
    await eventually(() => closed.has('/fetched'), { what: 'the fetched answer closed at the server' });
  });
});

describe('issue #26 item 10: a peer answering a huge body', () => {
  it('the node client refuses a view over VIEW_LIMIT with a clear error and closes it', async () => {
    handlers.set('/router/v1/node/runtime-status', endless(200, '{"nodeId":"'));
    const err = await new NodeClient('t', 30_000).runtimeStatus(base).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NodeCallError);
    expect((err as Error).message).toContain(`answer over ${VIEW_LIMIT / 1024 / 1024} MiB; not read further`);
    await eventually(() => closed.has('/router/v1/node/runtime-status'), { what: 'the view closed at the peer' });
  });

  it('a member whose decision page never ends is named missing, its reason logged', async () => {
    handlers.set('/router/v1/node/decisions', endless(200, '{"rows":[{"at":"'));
    const warnings: string[] = [];
    const log = { warn: (_o: unknown, m: string) => warnings.push(m), info() {}, error() {}, debug() {} } as never;
    const page = await gatherDecisions(
      {
        nodeId: 'm',
        clusterToken: 't',
        own: () => ({ rows: [], nextCursor: null }),
        members: () => [{ nodeId: 'huge', url: base }],
        log,
      },
      { limit: 10 },
    );
    expect(page.missing).toEqual(['huge']);
    expect(warnings.join('\n')).toContain('sent an answer over 32 MiB');
    await eventually(() => closed.has('/router/v1/node/decisions'), { what: 'the page closed at the peer' });
  });

  it("a helper whose answer to a lent request never ends: the owner's client is answered 502 answer_too_large (256 MiB read, no more)", async () => {
    handlers.set('/router/v1/node/worker/v1/chat/completions', endless(200, '{"choices":[{"message":{"content":"'));
    const answer = await forwardToHelper(
      base,
      't',
      {
        requestId: 'r1',
        owner: { nodeId: 'owner', model: 'm' },
        helper: { nodeId: 'helper', model: 'h' },
        endpoint: 'chat',
        json: { messages: [] },
      },
      new AbortController().signal,
      60_000,
    );
    expect(answer).toMatchObject({
      kind: 'answered',
      status: 502,
      body: { error: { code: 'answer_too_large', type: 'server_error' } },
    });
    expect(JSON.stringify(answer)).toContain("helper node answered for 'm' and sent an answer over 256 MiB");
    await eventually(() => closed.has('/router/v1/node/worker/v1/chat/completions'), {
      what: 'the relay answer closed at the helper',
    });
  });
});

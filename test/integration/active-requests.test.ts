import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lendingViewSchema } from '../../src-router/contract/decisions';
import { eventually, type TestNode } from '../support/node-harness';
import { nodeWithStaticUpstream } from '../support/static-upstream';

// UI-2: a node lists every request it runs for a model of its own while it runs (the console's lending view, what the
// Nodes page shows), a static route's included, under the request's own ID: the one its analytics row names.
describe("a node's active requests (UI-2)", () => {
  let node: TestNode;
  let close: (() => Promise<void>) | undefined;
  const held: ServerResponse[] = [];

  beforeAll(async () => {
    // An upstream that answers a chat completion only when the test lets it: the request stays active meanwhile (the
    // node's metrics scraper gets a 404).
    ({ node, close } = await nodeWithStaticUpstream((req, res) => {
      req.resume();
      if (req.method !== 'POST') return void res.writeHead(404).end();
      req.on('end', () => held.push(res));
    }));
  });
  afterAll(() => close?.());

  /** This node's active requests as the console reads them. */
  const active = async () => {
    const view = lendingViewSchema.parse(await node.console('/router/v1/console/lending'));
    return view.active?.find((n) => n.nodeId === 'test-node') ?? { requests: [] };
  };

  it('lists a request from its start to its end, under the ID its analytics row names', async () => {
    const answer = fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"up","messages":[{"role":"user","content":"hi"}]}',
      signal: AbortSignal.timeout(10_000),
    });
    const listed = await eventually(async () => (await active()).requests[0], { what: 'the request listed as active' });
    expect(listed).toMatchObject({
      model: 'up',
      clusterId: 'up',
      lane: 'static',
      stream: false,
      via: 'static_route',
      lentFrom: null,
    });
    await eventually(() => held.length === 1, { what: 'the upstream to hold the request' });
    held[0]
      .writeHead(200, { 'content-type': 'application/json' })
      .end(
        '{"id":"c1","object":"chat.completion","created":1,"model":"up","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}',
      );
    expect((await answer).status).toBe(200);
    await eventually(async () => (await active()).requests.length === 0, { what: 'the request gone from the list' });
    const row = await eventually(
      () => {
        const db = new Database(join(node.dir, 'store', 'router.db'), { readonly: true });
        try {
          return db.prepare("SELECT request_id FROM request_analytics WHERE model = 'up'").get() as
            | { request_id: string }
            | undefined;
        } finally {
          db.close();
        }
      },
      { what: 'the analytics row' },
    );
    expect(row.request_id).toBe(listed.id);
  });
});

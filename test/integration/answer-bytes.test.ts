import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type TestNode } from '../support/node-harness';
import { nodeWithStaticUpstream } from '../support/static-upstream';

// Issue #14: a non-streamed answer goes to an OpenAI client as the engine's bytes, read by a scan instead of a parse
// (`answer-scan`). Like any proxy, the node passes on what the engine wrote; an answer whose structure is broken is
// still a 502, and so is one that a translator must parse (the Ollama and Responses APIs) when it is not JSON.
const ANSWERS: Record<string, string> = {
  // Python's json.dumps: spaced, `1.0` kept, and NaN, which it writes by default and JSON.parse refuses.
  nan: '{"id": "c", "object": "chat.completion", "model": "up", "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1.0}, "score": NaN}',
  truncated: '{"id":"c","object":"chat.completion","model":"up","choices":[{"index":0',
};

describe('non-streamed answers passed on as the engine wrote them (issue #14)', () => {
  let node: TestNode;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ node, close } = await nodeWithStaticUpstream((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        const which = /"content":"(\w+)"/.exec(body)?.[1] ?? '';
        res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWERS[which] ?? '{}');
      });
    }));
  });
  afterAll(() => close?.());

  const post = (path: string, content: string) =>
    fetch(`${node.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'up', messages: [{ role: 'user', content }], stream: false }),
      signal: AbortSignal.timeout(10_000),
    });

  const error = async (res: Response) => JSON.stringify(await res.json());

  // One test: the analytics rows of the four requests are checked together, in the order the requests were made.
  it("an OpenAI client gets the engine's bytes as they came; a broken answer, or one a translator must parse, is a 502 and its row says so", async () => {
    // JSON.parse would refuse this one (NaN): the bytes go on as they came, the usage read alone.
    const nan = await post('/v1/chat/completions', 'nan');
    expect(nan.status).toBe(200);
    expect(await nan.text()).toBe(ANSWERS.nan);

    const truncated = await post('/v1/chat/completions', 'truncated');
    expect(truncated.status).toBe(502);
    expect(await error(truncated)).toContain('"code":"engine_bad_response"');

    // The Ollama and Responses APIs translate the answer: they parse it at once, and the row records the 502.
    const ollama = await post('/api/chat', 'nan');
    expect(ollama.status).toBe(502);
    expect(await error(ollama)).toMatch(/invalid JSON/);
    const responses = await fetch(`${node.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'up', input: 'nan' }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(responses.status).toBe(502);
    expect(await error(responses)).toMatch(/invalid JSON/);

    const rows = await eventually(
      () => {
        const db = new Database(join(node.dir, 'store', 'router.db'), { readonly: true });
        try {
          const all = db
            .prepare("SELECT outcome, status, tokens_generated FROM request_analytics WHERE model = 'up' ORDER BY id")
            .all();
          return all.length >= 4 ? all : undefined;
        } finally {
          db.close();
        }
      },
      { what: 'four analytics rows' },
    );
    expect(rows).toEqual([
      { outcome: 'ok', status: 200, tokens_generated: 1 },
      { outcome: 'error', status: 502, tokens_generated: null },
      { outcome: 'error', status: 502, tokens_generated: null },
      { outcome: 'error', status: 502, tokens_generated: null },
    ]);
  });
});

import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type TestNode } from '../support/node-harness';
import { nodeWithStaticUpstream } from '../support/static-upstream';

// Issue #14: a non-streamed answer goes to an OpenAI client as the engine's bytes, read by a scan instead of a parse
// (`answer-scan`). Like any proxy, the node passes on what the engine wrote; an answer whose structure is broken is
// still a 502, and so is one that a translator must parse (the Ollama API) when it is not JSON.
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
    fetch(`${node.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'up', messages: [{ role: 'user', content }], stream: false }), signal: AbortSignal.timeout(10_000) });

  it('an OpenAI client gets the engine\'s bytes as they came, even where JSON.parse would refuse them', async () => {
    const res = await post('/v1/chat/completions', 'nan');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(ANSWERS.nan);
  });

  it('an answer whose structure is broken is a 502 naming the engine\'s bad answer', async () => {
    const res = await post('/v1/chat/completions', 'truncated');
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('engine_bad_response');
  });

  it('the Ollama API, which translates the answer, parses it at once: a 502, and its analytics row says so', async () => {
    const res = await post('/api/chat', 'nan');
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: string }).error).toMatch(/invalid JSON/);
    // One row per request, in order: the OpenAI client's answer went out (its usage read alone), the other two failed.
    const rows = await eventually(() => {
      const db = new Database(join(node.dir, 'store', 'router.db'), { readonly: true });
      try {
        const all = db.prepare("SELECT outcome, status, tokens_generated FROM request_analytics WHERE model = 'up' ORDER BY id").all();
        return all.length === 3 ? all : undefined;
      } finally {
        db.close();
      }
    }, { what: 'three analytics rows' });
    expect(rows).toEqual([
      { outcome: 'ok', status: 200, tokens_generated: 1 },
      { outcome: 'error', status: 502, tokens_generated: null },
      { outcome: 'error', status: 502, tokens_generated: null },
    ]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestNode } from '../support/node-harness';
import { nodeWithStaticUpstream } from '../support/static-upstream';

// Issue #14: a proxy passes a request body on as it came; the node renames the model in the client's bytes instead
// of serialising the parsed body again. A real node, a real loopback upstream that records the bytes it received.
describe('request bodies forwarded as the client sent them (issue #14)', () => {
  let node: TestNode;
  let close: (() => Promise<void>) | undefined;
  const received: string[] = [];

  beforeAll(async () => {
    ({ node, close } = await nodeWithStaticUpstream((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'c1',
            object: 'chat.completion',
            created: 1,
            model: 'up',
            choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
          }),
        );
      });
    }));
  });
  afterAll(() => close?.());

  const post = (body: string) =>
    fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(10_000),
    });

  it('sends the upstream the exact bytes: spacing, escapes, number forms and key order kept', async () => {
    const body =
      '{ "messages": [ {"role":"user", "content":"caf\\u00e9 \\"model\\" \\ud83d\\ude00"} ],"model":"up", "temperature":1.50,"max_tokens":1 }';
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { model: string }).model).toBe('up');
    expect(received.at(-1)).toBe(body);
  });

  it('drops a byte-order mark, as the JSON parser does: engines in Go or Python refuse one', async () => {
    const body = '{"model":"up","messages":[{"role":"user","content":"hi"}]}';
    const res = await post(`\ufeff${body}`);
    expect(res.status).toBe(200);
    expect(received.at(-1)).toBe(body);
  });

  it("serialises the body again where the model cannot be renamed in place: the upstream still gets the client's request", async () => {
    const request = {
      model: 'up',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [
        {
          type: 'function',
          function: { name: 'pick', parameters: { type: 'object', properties: { model: { type: 'string' } } } },
        },
      ],
    };
    const res = await post(JSON.stringify(request, null, 1).replace('"model": "up"', '"model" :  "up"'));
    expect(res.status).toBe(200);
    expect(JSON.parse(received.at(-1)!)).toEqual(request);
  });

  it('a body that is not JSON is still refused with a clear error, and so is one with a __proto__ key', async () => {
    const bad = await post('{"model":"up",');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_json');
    const poisoned = await post('{"model":"up","messages":[{"role":"user","content":"x"}],"__proto__":{"admin":true}}');
    expect(poisoned.status).toBe(400);
  });
});

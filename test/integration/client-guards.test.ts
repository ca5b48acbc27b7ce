import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNode, type TestNode } from '../support/node-harness';

// Issue #9: no Host or Origin check let a web page reach /v1/* and /api/* (DNS rebinding, cross-site forms);
// client API keys guard the client APIs when set.
const KEY = 'client-key-0123456789abcdef';

describe('client guards on a real node', () => {
  let node: TestNode;
  const chat = (headers: Record<string, string> = {}) =>
    fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'x' }], max_tokens: 1 }),
    });

  beforeAll(async () => {
    node = await startNode({
      config: { server: { api_keys: [KEY], cors_origins: ['https://app.example'] } },
      models: {
        chat: { name: 'chat', backend: 'sim', capabilities: ['text'], sim: { load_time: '50ms', token_time: '1ms' } },
      },
    });
  });
  afterAll(() => node?.stop());

  it('API keys: none or a wrong one is an OpenAI-shaped 401 (Ollama-shaped on /api); the key works, also with the openai client', async () => {
    const none = await chat();
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
    expect((await chat({ authorization: 'Bearer wrong-key-0123456789' })).status).toBe(401);
    expect((await chat({ authorization: `Bearer ${KEY}` })).status).toBe(200);
    const openai = new OpenAI({ baseURL: `${node.url}/v1`, apiKey: KEY, maxRetries: 0 });
    expect(
      (
        await openai.chat.completions.create({
          model: 'chat',
          messages: [{ role: 'user', content: 'x' }],
          max_tokens: 1,
        })
      ).choices,
    ).toHaveLength(1);
    await expect(
      new OpenAI({ baseURL: `${node.url}/v1`, apiKey: 'nope-nope-nope-nope', maxRetries: 0 }).models.list(),
    ).rejects.toMatchObject({ status: 401 });
    const tags = await fetch(`${node.url}/api/tags`);
    expect(tags.status).toBe(401);
    expect(typeof ((await tags.json()) as { error: unknown }).error).toBe('string');
    // node and console APIs keep their own tokens
    expect(
      (await fetch(`${node.url}/router/v1/console/models`, { headers: { authorization: `Bearer ${node.token}` } }))
        .status,
    ).toBe(200);
  });

  it("a Host that is not this node's (DNS rebinding) gets 421, whatever the route", async () => {
    // fetch forbids setting Host; a raw request does what a rebinding browser would send
    const { request } = await import('node:http');
    const status = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const u = new URL(node.url);
        const req = request(
          {
            host: u.hostname,
            port: u.port,
            path,
            method: 'GET',
            headers: { host: 'attacker.example:80', authorization: `Bearer ${KEY}` },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
    expect(await status('/v1/models')).toBe(421);
    expect(await status('/api/tags')).toBe(421);
    expect(await status('/')).toBe(421);
  });

  it('a browser request from another site gets 403; a listed origin gets CORS headers and its preflight', async () => {
    const evil = await chat({ authorization: `Bearer ${KEY}`, origin: 'http://evil.example' });
    expect(evil.status).toBe(403);
    expect(((await evil.json()) as { error: { code: string } }).error.code).toBe('origin_not_allowed');
    const own = await chat({ authorization: `Bearer ${KEY}`, origin: node.url });
    expect(own.status).toBe(200);
    const listed = await chat({ authorization: `Bearer ${KEY}`, origin: 'https://app.example' });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const pre = await fetch(`${node.url}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-headers')).toContain('authorization');
  });
});

import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';

// Issue #26 item 1: every guard decides on the path the router matched, so no form of the request line reaches a
// protected route around its guard. Each protected path is sent in origin-form, absolute-form, `//`-prefixed,
// dot-segment, percent-encoded and upper-case variants, as raw request lines.
const KEY = 'client-key-0123456789abcdef';
const CLUSTER = 'target-forms-cluster-token-0123456789';

interface Answer {
  status: number;
  body: string;
}
function send(
  node: TestNode,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  const u = new URL(node.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method,
        path: target,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The six forms of one path; `routed` says whether the router still reaches the route through that form. */
function forms(node: TestNode, path: string): { name: string; target: string; routed: boolean }[] {
  const authority = new URL(node.url).host;
  const slash = path.lastIndexOf('/');
  const encoded = `${path.slice(0, slash + 1)}%${path
    .charCodeAt(slash + 1)
    .toString(16)
    .toUpperCase()}${path.slice(slash + 2)}`;
  return [
    { name: 'origin-form', target: path, routed: true },
    { name: 'absolute-form', target: `http://${authority}${path}`, routed: true },
    { name: 'absolute-form, upper-case scheme', target: `HTTP://${authority}${path}`, routed: true },
    { name: '//-prefixed', target: `/${path}`, routed: false },
    { name: 'dot-segment', target: `/x/..${path}`, routed: false },
    { name: 'percent-encoded', target: encoded, routed: true },
    { name: 'upper-case', target: path.toUpperCase(), routed: false },
  ];
}

/**
 * Sends every form of `path` without the credential the guard wants: a form the router still routes gets the
 * guard's answer, any other form a 404; none reaches the route. With `allowed` headers, a routed form passes, which
 * shows the form really reaches the route.
 */
async function expectGuarded(
  node: TestNode,
  method: string,
  path: string,
  guard: { status: number; code: string },
  opts: { headers?: Record<string, string>; allowed?: Record<string, string>; body?: string } = {},
): Promise<void> {
  for (const f of forms(node, path)) {
    const a = await send(node, method, f.target, opts.headers, opts.body);
    const what = `${method} ${f.target} (${f.name})`;
    if (f.routed) {
      expect(a.status, what).toBe(guard.status);
      expect(a.body, what).toContain(guard.code);
      if (opts.allowed)
        expect(
          (await send(node, method, f.target, opts.allowed, opts.body)).status,
          `${what} with the credential`,
        ).toBeLessThan(300);
    } else {
      expect([guard.status, 404], what).toContain(a.status);
    }
  }
}

describe('issue #26 item 1: guards decide on the matched route, whatever the request line', () => {
  let master: TestNode;
  let slave: TestNode;

  beforeAll(async () => {
    const [pm, ps] = [await freePort(), await freePort()];
    const url = (p: number) => `http://127.0.0.1:${p}`;
    const chat = {
      name: 'chat',
      backend: 'sim' as const,
      capabilities: ['text' as const],
      sim: { load_time: '50ms', token_time: '1ms' },
    };
    [master, slave] = await Promise.all([
      startNode({
        models: { chat },
        config: {
          server: { port: pm, api_keys: [KEY] },
          cluster: {
            role: 'master',
            node_id: 'master',
            token: CLUSTER,
            slave_urls: [url(ps)],
            health_interval: '500ms',
          },
        },
      }),
      startNode({
        models: {},
        config: {
          server: { port: ps },
          cluster: {
            role: 'slave',
            node_id: 'slave',
            token: CLUSTER,
            master_url: url(pm),
            public_url: url(ps),
            sync_interval: '500ms',
          },
        },
      }),
    ]);
    await eventually(
      async () =>
        (await master.console<{ nodes: { healthy: boolean }[] }>('/router/v1/console/cluster/nodes')).nodes.every(
          (n) => n.healthy,
        ),
      { what: 'cluster healthy' },
    );
  });
  afterAll(async () => {
    await Promise.all([master?.stop(), slave?.stop()]);
  });

  it('client API keys: /v1 and /api routes answer 401 without the key in every form', async () => {
    const key = { authorization: `Bearer ${KEY}` };
    await expectGuarded(master, 'GET', '/v1/models', { status: 401, code: 'invalid_api_key' }, { allowed: key });
    const chat = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'x' }], max_tokens: 1 });
    await expectGuarded(
      master,
      'POST',
      '/v1/chat/completions',
      { status: 401, code: 'invalid_api_key' },
      { body: chat, allowed: key },
    );
    await expectGuarded(master, 'GET', '/api/tags', { status: 401, code: 'API key' }, { allowed: key });
    // The Ollama-shaped error is chosen on the matched route too.
    const ollama = await send(master, 'GET', `http://${new URL(master.url).host}/api/tags`);
    expect(typeof (JSON.parse(ollama.body) as { error: unknown }).error).toBe('string');
  });

  it('Host: a rebinding name is refused in the Host header and in an absolute-form target', async () => {
    const own = new URL(master.url).host;
    expect(
      (await send(master, 'GET', '/v1/models', { host: 'attacker.example', authorization: `Bearer ${KEY}` })).status,
    ).toBe(421);
    expect(
      (await send(master, 'GET', 'http://attacker.example/v1/models', { host: own, authorization: `Bearer ${KEY}` }))
        .status,
    ).toBe(421);
    expect(
      (
        await send(master, 'GET', 'http://attacker.example:80/router/v1/console/models', {
          host: own,
          authorization: `Bearer ${TEST_CONSOLE_TOKEN}`,
        })
      ).status,
    ).toBe(421);
    expect(
      (await send(master, 'GET', `http://${own}/v1/models`, { host: own, authorization: `Bearer ${KEY}` })).status,
    ).toBe(200);
  });

  it('Origin: another site is refused in every form', async () => {
    await expectGuarded(
      master,
      'GET',
      '/v1/models',
      { status: 403, code: 'origin_not_allowed' },
      { headers: { origin: 'http://evil.example', authorization: `Bearer ${KEY}` } },
    );
  });

  it('console, site and node tokens: 401 in every form', async () => {
    const consoleToken = { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` };
    await expectGuarded(
      master,
      'GET',
      '/router/v1/console/models',
      { status: 401, code: 'console token' },
      { allowed: consoleToken },
    );
    await expectGuarded(
      master,
      'GET',
      '/router/v1/site/routing-groups',
      { status: 401, code: 'console token' },
      { allowed: consoleToken },
    );
    await expectGuarded(
      master,
      'GET',
      '/router/v1/node/snapshot',
      { status: 401, code: 'cluster token' },
      { allowed: { authorization: `Bearer ${CLUSTER}` } },
    );
  });

  it('the slave recipe gate: a recipe write on a slave is 409 in every form', async () => {
    const recipe = JSON.stringify({ name: 'r' });
    await expectGuarded(
      slave,
      'PUT',
      '/router/v1/site/recipes/r',
      { status: 409, code: 'recipes_on_master' },
      { headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` }, body: recipe },
    );
  });
});

import { createServer, type IncomingMessage, type Server } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';

// Issue #37 item 10: `user:pass@` in a static route's URL was shown to every console reader (routed upstreams, scrape
// pods) and on the Settings screen, and was never sent upstream (undici takes no user information from a URL). Now the
// node sends it as Basic authorization, to requests and to metrics scrapes alike, and every view shows `user:***@`.

const USER = 'alice';
const PASSWORD = 'pa55:w@rd-of-alice';
const ENCODED = encodeURIComponent(PASSWORD);
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const OPERATOR = 'static-route-operator-token-0123456789';
const CLUSTER_TOKEN = 'static-route-cluster-token-0123456789';

/** Anything that would give the password (or its encodings) away. */
const LEAKS = [PASSWORD, ENCODED, 'pa55', Buffer.from(`${USER}:${PASSWORD}`).toString('base64')];

const ANSWER = {
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'upstream-model',
  choices: [
    { index: 0, message: { role: 'assistant', content: 'hello from behind basic auth' }, finish_reason: 'stop' },
  ],
  usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
};
const METRICS = 'vllm:num_requests_running 0\nvllm:num_requests_waiting 0\nvllm:gpu_cache_usage_perc 0.25\n';

/** A real loopback upstream behind Basic authorization, as a reverse proxy in front of a model server puts it. */
function basicAuthUpstream(): Promise<{ server: Server; port: number; seen: { path: string; auth?: string }[] }> {
  const seen: { path: string; auth?: string }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    seen.push({ path: req.url ?? '', auth: req.headers.authorization });
    req.resume();
    req.on('end', () => {
      if (req.headers.authorization !== BASIC)
        return res
          .writeHead(401, { 'www-authenticate': 'Basic realm="models"', 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'authorization required', type: 'auth', code: 401 } }));
      if (req.url === '/metrics') return res.writeHead(200, { 'content-type': 'text/plain' }).end(METRICS);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(ANSWER));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port, seen })),
  );
}

describe('static-route credentials: sent upstream as Basic authorization, never shown', () => {
  let node: TestNode;
  let upstream: Awaited<ReturnType<typeof basicAuthUpstream>>;
  let deadPort: number;

  beforeAll(async () => {
    upstream = await basicAuthUpstream();
    deadPort = await freePort();
    node = await startNode({
      models: {},
      config: {
        // A master, so the node API (cluster token) answers too.
        cluster: { role: 'master', token: CLUSTER_TOKEN },
        console: { operators: [OPERATOR] },
        routing: {
          scrape_interval: '200ms',
          static_routes: {
            guarded: { engine: 'vllm', endpoints: [`http://${USER}:${ENCODED}@127.0.0.1:${upstream.port}`] },
            gone: { endpoints: [`http://${USER}:${ENCODED}@127.0.0.1:${deadPort}/v1-base`] },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await node?.stop();
    upstream?.server.closeAllConnections();
    await new Promise((r) => upstream?.server.close(r));
  });

  it('an OpenAI client reaches the upstream: it received the Basic authorization, at a URL without user information', async () => {
    const openai = new OpenAI({ baseURL: `${node.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
    const answer = await openai.chat.completions.create({
      model: 'guarded',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.choices[0].message.content).toBe('hello from behind basic auth');
    const call = upstream.seen.find((s) => s.path === '/v1/chat/completions');
    expect(call?.auth).toBe(BASIC);
  });

  it("the metrics scrape sends it too: the pod's metrics are read", async () => {
    await eventually(() => upstream.seen.some((s) => s.path === '/metrics' && s.auth === BASIC), {
      what: 'an authorized scrape',
    });
    const scrape = await eventually(
      async () => {
        const { pods } = await node.console<{ pods: { podId: string; metrics?: unknown; lastError?: string }[] }>(
          '/router/v1/console/runtime.scrape',
        );
        const pod = pods.find((p) => p.podId.startsWith('guarded '));
        return pod?.metrics ? pod : undefined;
      },
      { what: 'the guarded pod scraped' },
    );
    expect(scrape.podId).toBe(`guarded http://${USER}:***@127.0.0.1:${upstream.port}`);
  });

  it("a client's error for an unreachable upstream names it without user information", async () => {
    const res = await fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gone', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(502);
    const text = await res.text();
    expect(text).toContain(`127.0.0.1:${deadPort}`);
    expect(text).not.toContain(USER);
    for (const leak of LEAKS) expect(text).not.toContain(leak);
  });

  it('no view shows the password, for any token: routed upstreams and scrape pods show user:***@', async () => {
    const views: [string, string][] = [
      ['/router/v1/console/runtime.upstreams', TEST_CONSOLE_TOKEN],
      ['/router/v1/console/runtime.scrape', TEST_CONSOLE_TOKEN],
      ['/router/v1/console/runtime.routing', TEST_CONSOLE_TOKEN],
      ['/router/v1/console/models', TEST_CONSOLE_TOKEN],
      ['/router/v1/console/cluster/models', TEST_CONSOLE_TOKEN],
      ['/router/v1/console/runtime.upstreams', OPERATOR],
      ['/router/v1/console/runtime.scrape', OPERATOR],
      ['/router/v1/console/runtime.routing', OPERATOR],
      ['/router/v1/console/models', OPERATOR],
      ['/router/v1/console/settings', OPERATOR],
      ['/router/v1/node/snapshot', CLUSTER_TOKEN],
      ['/v1/models', ''],
      ['/api/tags', ''],
      ['/metrics', ''],
    ];
    for (const [path, token] of views) {
      const res = await fetch(`${node.url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
      expect(res.status, path).toBe(200);
      const text = await res.text();
      for (const leak of LEAKS) expect(text, `${path} (${token.slice(0, 8)})`).not.toContain(leak);
    }
    for (const token of [TEST_CONSOLE_TOKEN, OPERATOR]) {
      const { upstreams } = (await (
        await fetch(`${node.url}/router/v1/console/runtime.upstreams`, {
          headers: { authorization: `Bearer ${token}` },
        })
      ).json()) as { upstreams: { model: string; endpoint: string; status: string }[] };
      expect(upstreams.find((u) => u.model === 'guarded')).toMatchObject({
        endpoint: `http://${USER}:***@127.0.0.1:${upstream.port}`,
        status: 'answering',
      });
      expect(upstreams.find((u) => u.model === 'gone')?.endpoint).toBe(
        `http://${USER}:***@127.0.0.1:${deadPort}/v1-base`,
      );
    }
    // The node's own log lines neither.
    for (const leak of LEAKS) expect(node.output()).not.toContain(leak);
  });

  it('Settings shows each endpoint with its password masked, and keeps the stored one when sent back masked', async () => {
    const settings = (init: RequestInit = {}) =>
      fetch(`${node.url}/router/v1/console/settings`, {
        ...init,
        headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' },
      });
    const { config } = (await (await settings()).json()) as {
      config: { routing: { static_routes: Record<string, { endpoints: string[] }> } };
    };
    expect(config.routing.static_routes.guarded.endpoints).toEqual([
      `http://${USER}:••••••••@127.0.0.1:${upstream.port}/`,
    ]);
    // Sent back as read: the stored password is put back, so nothing changed and nothing is written.
    const same = await settings({ method: 'PUT', body: JSON.stringify({ config }) });
    expect(await same.json()).toMatchObject({ written: false, restarted: false });
    // A masked password moved to another host is not the stored one: refused at that endpoint.
    const moved = structuredClone(config);
    moved.routing.static_routes.guarded.endpoints = [`http://${USER}:••••••••@127.0.0.2:${upstream.port}/`];
    const refused = await settings({ method: 'PUT', body: JSON.stringify({ config: moved }) });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { param: string } }).error.param).toBe(
      'config.routing.static_routes.guarded.endpoints.0',
    );
  });
});

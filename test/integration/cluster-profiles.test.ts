import { statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import { type LendingCluster, simText, startLendingCluster } from '../support/lending-cluster';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';

// UI-5: a local node keeps profiles of remote clusters (tested once before they are kept; never a token in an answer
// or a log) and forwards every console and site call to them with the stored token, bounded in time, with a clear
// 502/504 that names the cluster when it cannot answer.

const REMOTE_TOKEN = 'remote-console-token-9876543210';
const LOCAL_TOKEN = 'local-console-token-0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('connection profiles and the cluster proxy (UI-5)', () => {
  let local: TestNode;
  let remote: LendingCluster;
  let broken: Server;
  let brokenUrl: string;
  let notRouter: Server;
  let notRouterUrl: string;
  let remoteId = '';

  beforeAll(async () => {
    [local, remote] = await Promise.all([
      startNode({
        models: { l: simText('local-model', '5ms') },
        config: { console: { token: LOCAL_TOKEN, remote_timeout: '1500ms' } },
        env: { ROUTERDESK_LOG_LEVEL: 'info' },
      }),
      startLendingCluster({ slaves: { s1: { a: simText('model-a', '5ms') }, s2: { b: simText('model-b', '5ms') } } }),
    ]);
    // The remote master's console token is TEST_CONSOLE_TOKEN; the local node's is LOCAL_TOKEN.
    // A peer that passes the probe but answers 500 to everything else, and one path that never answers.
    broken = createServer((req, res) => {
      if (req.headers.authorization !== `Bearer ${REMOTE_TOKEN}`) return void res.writeHead(401).end();
      if (req.url === '/router/v1/console/cluster/nodes') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(
          JSON.stringify({
            nodes: [{ nodeId: 'broken', role: 'standalone', local: true, version: '9.9.9', url: null }],
          }),
        );
      }
      if (req.url?.startsWith('/router/v1/console/slow')) return; // never answers
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'remote exploded', code: 'internal' } }));
    });
    const port = await freePort();
    await new Promise<void>((r) => broken.listen(port, '127.0.0.1', r));
    brokenUrl = `http://127.0.0.1:${port}`;
    notRouter = createServer((_req, res) => void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found'));
    const port2 = await freePort();
    await new Promise<void>((r) => notRouter.listen(port2, '127.0.0.1', r));
    notRouterUrl = `http://127.0.0.1:${port2}`;
  });
  afterAll(async () => {
    broken?.closeAllConnections();
    broken?.close();
    notRouter?.close();
    await Promise.all([local?.stop(), remote?.stop()]);
  });

  const call = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
    fetch(`${local.url}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${init.token ?? LOCAL_TOKEN}`,
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const add = (body: unknown) => call('/router/v1/console/clusters', { method: 'POST', body });

  it('refuses a profile it cannot use, saying what failed: wrong token, unreachable, not a router, bad URL', async () => {
    const wrong = await add({ name: 'remote', url: remote.master.url, token: 'not-the-token' });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: object }).error).toMatchObject({
      code: 'cluster_token_refused',
      param: 'token',
      message: expect.stringContaining('refused the token'),
    });
    const gone = await add({ name: 'remote', url: `http://127.0.0.1:${await freePort()}`, token: 'x' });
    expect(((await gone.json()) as { error: object }).error).toMatchObject({
      code: 'cluster_unreachable',
      param: 'url',
      message: expect.stringMatching(/could not reach .*ECONNREFUSED/),
    });
    const other = await add({ name: 'remote', url: notRouterUrl, token: 'x' });
    expect(((await other.json()) as { error: object }).error).toMatchObject({
      code: 'not_a_router',
      param: 'url',
      message: expect.stringContaining('is not a Routerdesk node'),
    });
    const bad = await add({ name: 'remote', url: 'ftp://x/y', token: 'x' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('url');
    expect(
      ((await (await call('/router/v1/console/clusters')).json()) as { clusters: unknown[] }).clusters,
    ).toHaveLength(1);
  });

  it('keeps a profile that answers; the list shows the local cluster first, then the remote with its role and version, never a token', async () => {
    const res = await add({ name: 'remote', url: remote.master.url, token: TEST_CONSOLE_TOKEN });
    expect(res.status).toBe(201);
    const view = (await res.json()) as { id: string };
    remoteId = view.id;
    const text = await (await call('/router/v1/console/clusters')).text();
    const list = JSON.parse(text) as {
      clusters: { id: string; local: boolean; reachable: boolean; role: string | null; nodeId: string | null }[];
    };
    expect(list.clusters.map((c) => [c.id === 'local' ? 'local' : 'remote', c.reachable, c.role, c.nodeId])).toEqual([
      ['local', true, 'standalone', 'test-node'],
      ['remote', true, 'master', 'master'],
    ]);
    expect(text).not.toContain(TEST_CONSOLE_TOKEN);
    expect(text).not.toContain(LOCAL_TOKEN);
    expect((await add({ name: 'remote', url: remote.master.url, token: TEST_CONSOLE_TOKEN })).status).toBe(409);
  });

  it('forwards console reads to the remote, and `local` to this node itself', async () => {
    const nodes = (await (await call(`/router/v1/console/clusters/${remoteId}/console/cluster/nodes`)).json()) as {
      nodes: { nodeId: string }[];
    };
    expect(nodes.nodes.map((n) => n.nodeId).sort()).toEqual(['master', 's1', 's2']);
    const here = (await (await call('/router/v1/console/clusters/local/console/models')).json()) as {
      models: { publicId: string }[];
    };
    expect(here.models.map((m) => m.publicId)).toEqual(['local-model']);
    const models = (await (await call(`/router/v1/console/clusters/${remoteId}/console/cluster/models`)).json()) as {
      models: { id: string }[];
    };
    expect(models.models.map((m) => m.id).sort()).toEqual(['model-a', 'model-b']);
  });

  it('a site write lands on the remote and not locally', async () => {
    const res = await call(`/router/v1/console/clusters/${remoteId}/site/text-routing-groups`, {
      method: 'POST',
      body: {
        owner: { node_id: 's1', model: 'a' },
        helper: { node_id: 's2', model: 'b' },
        acknowledge_different_weights: true,
      },
    });
    expect(res.status).toBe(201);
    expect((await remote.console<{ links: unknown[] }>('/router/v1/site/text-routing-groups')).links).toHaveLength(1);
    expect(
      ((await (await call('/router/v1/site/text-routing-groups')).json()) as { links: unknown[] }).links,
    ).toHaveLength(0);
    // A 400 of the remote comes back as it is, with the field it named.
    const bad = await call(`/router/v1/console/clusters/${remoteId}/site/text-routing-groups`, {
      method: 'POST',
      body: { owner: { node_id: 's1' } },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toMatch(/^owner/);
  });

  it('streams a download through the proxy (the decision-log export) with its file name', async () => {
    const res = await call(`/router/v1/console/clusters/${remoteId}/console/decisions/export?format=csv`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/attachment; filename=".*\.csv"/);
    const csv = await res.text();
    expect(csv.split('\n')[0]).toMatch(/^id,at,node_id/);
  });

  it('a remote that answers 500 comes back as that 500; one that never answers is a 504 naming it within the time-out', async () => {
    const res = await add({ name: 'broken', url: brokenUrl, token: REMOTE_TOKEN });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { id: string }).id;
    const failed = await call(`/router/v1/console/clusters/${id}/console/models`);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toMatchObject({ error: { message: 'remote exploded' } });
    const slow = await call(`/router/v1/console/clusters/${id}/console/slow`);
    expect(slow.status).toBe(504);
    expect(((await slow.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'cluster_timeout',
      message: expect.stringMatching(/cluster 'broken' .* did not answer within 1\.5 s/),
    });
  });

  it('a remote that stops: the list and the proxy say so, naming the cluster', async () => {
    const stopped = await startNode({ models: {}, config: { console: { token: REMOTE_TOKEN } } });
    const res = await add({ name: 'short-lived', url: stopped.url, token: REMOTE_TOKEN });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { id: string }).id;
    await stopped.stop();
    const proxied = await call(`/router/v1/console/clusters/${id}/console/models`);
    expect(proxied.status).toBe(502);
    expect(((await proxied.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'cluster_unreachable',
      message: expect.stringContaining("cluster 'short-lived'"),
    });
    await eventually(
      async () => {
        const list = (await (await call('/router/v1/console/clusters')).json()) as {
          clusters: { name: string; reachable: boolean; lastError: string | null }[];
        };
        const c = list.clusters.find((x) => x.name === 'short-lived');
        return c && !c.reachable && /could not (be )?reach/.test(c.lastError ?? '');
      },
      { what: 'the stopped cluster listed as unreachable' },
    );
    expect((await call(`/router/v1/console/clusters/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await call(`/router/v1/console/clusters/${id}/console/models`)).status).toBe(404);
  });

  it('issue #26 item 6: a new URL without the token is a 400 at field token, and the stored token never goes to that URL', async () => {
    const seen: string[] = [];
    const trap = createServer((req, res) => {
      seen.push(req.headers.authorization ?? '');
      res.writeHead(401).end();
    });
    const port = await freePort();
    await new Promise<void>((r) => trap.listen(port, '127.0.0.1', r));
    try {
      const moved = await call(`/router/v1/console/clusters/${remoteId}`, {
        method: 'PATCH',
        body: { url: `http://127.0.0.1:${port}` },
      });
      expect(moved.status).toBe(400);
      expect(((await moved.json()) as { error: object }).error).toMatchObject({
        code: 'token_required',
        param: 'token',
        message: expect.stringContaining('needs the token again'),
      });
      expect(seen).toEqual([]);
      // The URL it has is no new URL; a new URL with a token given is tested with that token only.
      expect(
        (await call(`/router/v1/console/clusters/${remoteId}`, { method: 'PATCH', body: { url: remote.master.url } }))
          .status,
      ).toBe(200);
      const withToken = await call(`/router/v1/console/clusters/${remoteId}`, {
        method: 'PATCH',
        body: { url: `http://127.0.0.1:${port}`, token: 'a-token-for-the-trap' },
      });
      expect(withToken.status).toBe(400);
      expect(seen).toEqual(['Bearer a-token-for-the-trap']);
      const list = (await (await call('/router/v1/console/clusters')).json()) as {
        clusters: { id: string; url: string | null }[];
      };
      expect(new URL(list.clusters.find((c) => c.id === remoteId)!.url!).origin).toBe(
        new URL(remote.master.url).origin,
      );
    } finally {
      trap.closeAllConnections();
      trap.close();
    }
  });

  it('a changed token is tested again; a profile never shows a token, in answers or in the log; the store is owner-only', async () => {
    const patched = await call(`/router/v1/console/clusters/${remoteId}`, {
      method: 'PATCH',
      body: { token: 'wrong-again' },
    });
    expect(patched.status).toBe(400);
    const renamed = await call(`/router/v1/console/clusters/${remoteId}`, {
      method: 'PATCH',
      body: { name: 'remote-2' },
    });
    expect(await renamed.json()).toMatchObject({ name: 'remote-2', reachable: true });
    expect((await call('/router/v1/console/clusters', { token: 'nope' })).status).toBe(401);
    await sleep(200); // the last lines of the log are written
    expect(local.output()).not.toContain(REMOTE_TOKEN);
    expect(local.output()).not.toContain(TEST_CONSOLE_TOKEN);
    expect(statSync(join(local.dir, 'store', 'router.db')).mode & 0o777).toBe(0o600);
  });
});

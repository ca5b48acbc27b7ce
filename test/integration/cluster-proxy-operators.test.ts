import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simText } from '../support/lending-cluster';
import { startNode, type TestNode } from '../support/node-harness';

// The cluster proxy forwards with the profile's stored token, usually an operator's on the remote: a read-only
// console token here gets remote reads, but a remote write or a read of the remote's Settings needs an operator here,
// whatever form the path is written in. Profiles are kept by operators only.

const READ_ONLY = 'read-only-console-token-0123456789';
const OPERATOR = 'operator-console-token-0123456789';
const REMOTE_TOKEN = 'remote-console-token-0123456789';

describe('issue #26 item 3: the remote-cluster proxy needs the local operator role for writes and operator-only reads', () => {
  let local: TestNode;
  let remote: TestNode;
  let id = '';

  beforeAll(async () => {
    [local, remote] = await Promise.all([
      startNode({
        models: { l: simText('local-model', '5ms') },
        config: { cluster: { node_id: 'local-node' }, console: { token: READ_ONLY, operators: [OPERATOR] } },
      }),
      startNode({
        models: { r: simText('remote-model', '5ms') },
        config: { cluster: { node_id: 'remote-node' }, console: { token: REMOTE_TOKEN } },
      }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([local?.stop(), remote?.stop()]);
  });

  const call = (path: string, token: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${local.url}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${token}`,
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const rawGet = (path: string, token: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const { hostname, port } = new URL(local.url);
      const req = httpRequest({ hostname, port, path, headers: { authorization: `Bearer ${token}` } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  const codeOf = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

  it('profiles are created, changed and removed by operators only', async () => {
    const refused = await call('/router/v1/console/clusters', READ_ONLY, {
      method: 'POST',
      body: { name: 'remote', url: remote.url, token: REMOTE_TOKEN },
    });
    expect(refused.status).toBe(403);
    expect(await codeOf(refused)).toBe('not_an_operator');
    const made = await call('/router/v1/console/clusters', OPERATOR, {
      method: 'POST',
      body: { name: 'remote', url: remote.url, token: REMOTE_TOKEN },
    });
    expect(made.status).toBe(201);
    id = ((await made.json()) as { id: string }).id;
    for (const [method, body] of [
      ['PATCH', { name: 'renamed' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await call(`/router/v1/console/clusters/${id}`, READ_ONLY, { method, body });
      expect(res.status, method).toBe(403);
      expect(await codeOf(res)).toBe('not_an_operator');
    }
    expect(
      (
        (await (await call('/router/v1/console/clusters', READ_ONLY)).json()) as { clusters: { name: string }[] }
      ).clusters.map((c) => c.name),
    ).toEqual(['local', 'remote']);
  });

  it('a read-only token reads the remote, but cannot write to it nor read its Settings, in any spelling of the path', async () => {
    const nodes = await call(`/router/v1/console/clusters/${id}/console/cluster/nodes`, READ_ONLY);
    expect(nodes.status).toBe(200);
    expect(((await nodes.json()) as { nodes: { nodeId: string }[] }).nodes.map((n) => n.nodeId)).toEqual([
      'remote-node',
    ]);

    // Sent as written (fetch would resolve dot segments before sending).
    for (const spelled of [
      'settings',
      'Settings',
      '%73ettings',
      './settings',
      'models/../settings',
      'models/%2e%2e/settings',
      'models/%2E%2E%2Fsettings',
      '/settings',
      'settings/',
      'settings?x=1',
    ]) {
      const res = await rawGet(`/router/v1/console/clusters/${id}/console/${spelled}`, READ_ONLY);
      expect(res.status, spelled).toBe(403);
      expect(JSON.parse(res.body).error.code).toBe('not_an_operator');
    }
    // Through the remote's own proxy (its `local` cluster is itself, called with the stored token): still the
    // remote's Settings, so still an operator's read, in any spelling of the nested path.
    for (const nested of [
      'clusters/local/console/settings',
      'clusters/local/console/clusters/local/console/settings',
      'clusters%2Flocal%2Fconsole%2Fsettings',
      'clusters/local/site/../console/settings',
      'models/../clusters/./local/console//settings',
    ]) {
      const res = await rawGet(`/router/v1/console/clusters/${id}/console/${nested}`, READ_ONLY);
      expect(res.status, nested).toBe(403);
      expect(JSON.parse(res.body).error.code).toBe('not_an_operator');
    }
    // Encoded twice: sent on as that one segment, which the remote routes nowhere.
    expect((await rawGet(`/router/v1/console/clusters/${id}/console/%2573ettings`, READ_ONLY)).status).toBe(404);
    // A path that climbs out of the API it names is refused outright.
    expect((await rawGet(`/router/v1/console/clusters/${id}/console/%2e%2e/console/settings`, READ_ONLY)).status).toBe(
      400,
    );
    expect((await rawGet(`/router/v1/console/clusters/${id}/site/../../console/settings`, READ_ONLY)).status).toBe(400);

    const file = join(remote.dir, 'node.yaml');
    const before = readFileSync(file, 'utf8');
    const write = await call(`/router/v1/console/clusters/${id}/console/settings`, READ_ONLY, {
      method: 'PUT',
      body: { config: { surprise: true } },
    });
    expect(write.status).toBe(403);
    expect(await codeOf(write)).toBe('not_an_operator');
    const site = await call(`/router/v1/console/clusters/${id}/site/guardians`, READ_ONLY, {
      method: 'PUT',
      body: { scope: 'cluster', guardian: { node_id: 'remote-node', model: 'r' } },
    });
    expect(site.status).toBe(403);
    const routing = await call(`/router/v1/console/clusters/${id}/console/runtime.setRouting`, READ_ONLY, {
      method: 'POST',
      body: { strategy: 'round-robin' },
    });
    expect(routing.status).toBe(403);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('an operator reads and writes the remote through the proxy', async () => {
    const read = await call(`/router/v1/console/clusters/${id}/console/settings`, OPERATOR);
    expect(read.status).toBe(200);
    expect(((await read.json()) as { path: string }).path).toBe(join(remote.dir, 'node.yaml'));
    // The remote itself judges the write (a 400 naming the field): it got there.
    const write = await call(`/router/v1/console/clusters/${id}/console/settings`, OPERATOR, {
      method: 'PUT',
      body: { config: { surprise: true } },
    });
    expect(write.status).toBe(400);
    expect(((await write.json()) as { error: { param: string } }).error.param).toMatch(/^config/);
  });
});

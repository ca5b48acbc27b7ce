import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTINGS_MASK } from '../../src-router/contract/settings';
import { startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';
import { startRedis, type TestRedis } from '../support/redis-server';

// Issue #26 item 8: a masked Redis password stays with its destination. The Redis client reads options from the
// URL's query too (`?path=` connects to a Unix socket instead of host:port), so a masked URL whose query changed is
// a new destination like a new host: refused at config.redis.url, nothing written, nothing sent there.

const PASSWORD = 'stored-redis-pass-0123456789';

describe('issue #26 item 8: a masked Redis password is not sent to a destination named in the URL query', () => {
  let redis: TestRedis;
  let node: TestNode;
  let trap: Server;
  let dir: string;
  let heard = '';

  beforeAll(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'routerdesk-trap-'));
    trap = createServer((socket) => socket.on('data', (d) => (heard += d.toString('latin1'))));
    await new Promise<void>((resolve) => trap.listen(join(dir, 'trap.sock'), resolve));
    node = await startNode({
      models: {},
      config: { redis: { url: `redis://:${PASSWORD}@127.0.0.1:${redis.port}/0` } },
    });
  });
  afterAll(async () => {
    await node?.stop();
    await redis?.stop();
    trap?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const settings = (body?: unknown) =>
    fetch(`${node.url}/router/v1/console/settings`, {
      method: body === undefined ? 'GET' : 'PUT',
      headers: {
        authorization: `Bearer ${TEST_CONSOLE_TOKEN}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('a masked URL with a query the stored one lacks (a Unix socket path, another host or port option) is a 400 at config.redis.url', async () => {
    const config = ((await (await settings()).json()) as { config: { redis: { url: string } } }).config;
    const masked = config.redis.url;
    expect(masked).toBe(`redis://:${SETTINGS_MASK}@127.0.0.1:${redis.port}/0`);
    const file = join(node.dir, 'node.yaml');
    const before = readFileSync(file, 'utf8');
    for (const query of [`?path=${join(dir, 'trap.sock')}`, '?host=evil.example', '?port=1']) {
      const res = await settings({ config: { ...config, redis: { url: `${masked}${query}` } } });
      const body = (await res.json()) as { error?: { param: string; message: string } };
      expect(res.status, `${query}: ${JSON.stringify(body)}`).toBe(400);
      expect(body.error).toMatchObject({
        param: 'config.redis.url',
        message: expect.stringMatching(/give the secret again for the new destination/),
      });
      expect(readFileSync(file, 'utf8')).toBe(before);
    }
    // The same destination keeps the stored password: another database on it is fine.
    const same = await settings({ config: { ...config, redis: { url: masked.replace(/\/0$/, '/1') } } });
    expect(same.status).toBe(200);
    expect(readFileSync(file, 'utf8')).toContain(`redis://:${PASSWORD}@127.0.0.1:${redis.port}/1`);
    expect(heard).not.toContain(PASSWORD);
  });
});

// A master's `cluster.public_url` is where its slaves reach it with the cluster token: the URL the master lists for
// itself among its members, which a slave calls for a guardian on the master (image prompts and the token). So a
// new public URL with the token masked is a new destination of the token, like a new slave or master URL.
describe('issue #26 item 8: a masked cluster token is not kept for a new cluster.public_url', () => {
  let master: TestNode;

  beforeAll(async () => {
    master = await startNode({
      models: {},
      config: {
        cluster: {
          role: 'master',
          token: 'public-url-cluster-token-0123456789',
          slave_urls: ['http://127.0.0.1:9'],
          public_url: 'http://127.0.0.1:9/',
        } as never,
      },
    });
  });
  afterAll(async () => {
    await master?.stop();
  });

  it('a masked token with a new public URL is a 400 at config.cluster.token; given again, it is written', async () => {
    const call = (body?: unknown) =>
      fetch(`${master.url}/router/v1/console/settings`, {
        method: body === undefined ? 'GET' : 'PUT',
        headers: {
          authorization: `Bearer ${TEST_CONSOLE_TOKEN}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const config = ((await (await call()).json()) as { config: { cluster: Record<string, unknown> } }).config;
    expect(config.cluster.token).toBe(SETTINGS_MASK);
    const file = join(master.dir, 'node.yaml');
    const before = readFileSync(file, 'utf8');
    const moved = await call({
      config: { ...config, cluster: { ...config.cluster, public_url: 'http://attacker.example:8080' } },
    });
    const body = (await moved.json()) as { error?: { param: string; message: string } };
    expect(moved.status, JSON.stringify(body)).toBe(400);
    expect(body.error).toMatchObject({
      param: 'config.cluster.token',
      message: expect.stringMatching(/attacker\.example/),
    });
    expect(readFileSync(file, 'utf8')).toBe(before);
    // The same public URL spelt with a trailing slash or in upper case is no new destination.
    const same = await call({
      config: { ...config, cluster: { ...config.cluster, public_url: 'HTTP://127.0.0.1:9' } },
    });
    expect(same.status, await same.clone().text()).toBeLessThan(300);
  });
});

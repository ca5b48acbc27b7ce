import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { freePort } from '../../src-router/backends';
import { healthAnswerSchema } from '../../src-router/contract';
import { CONSOLE_CSP } from '../../src-router/http/security-headers';
import { simText } from '../support/lending-cluster';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';

// Issue #13: the node's Settings — read with secrets masked, written only when valid as start-up validates it (the
// field path of a bad one, nothing written), atomically with a .bak, and the node restarted in-process on it: here a
// standalone node becomes a master and polls its slave. The console's CSP and nosniff on every answer.

const CLUSTER_TOKEN = 'settings-cluster-token-0123456789';

describe('node settings from the console (issue #13)', () => {
  let node: TestNode;
  let slave: TestNode | undefined;
  let file: string;

  beforeAll(async () => {
    node = await startNode({ models: { m: simText('model-m', '5ms') } });
    file = join(node.dir, 'node.yaml');
  });
  afterAll(async () => {
    await slave?.stop();
    await node?.stop();
  });

  const settings = (init: { method?: string; body?: unknown; token?: string } = {}) =>
    fetch(`${node.url}/router/v1/console/settings`, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${init.token ?? TEST_CONSOLE_TOKEN}`,
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const view = async () =>
    (await (await settings()).json()) as {
      config: Record<string, Record<string, unknown>>;
      schema: { properties?: Record<string, unknown> };
      path: string;
      restartError: string | null;
    };

  it("reads the config in the YAML's own shape with secrets masked, its JSON Schema and its file", async () => {
    const v = await view();
    expect(v.path).toBe(file);
    expect(v.config.console.token).toBe('••••••••');
    expect(JSON.stringify(v)).not.toContain(TEST_CONSOLE_TOKEN);
    expect(v.config.cluster.node_id).toBe('test-node');
    expect(Object.keys(v.schema.properties ?? {})).toEqual(
      expect.arrayContaining(['server', 'cluster', 'models', 'console', 'redis']),
    );
    expect((await settings({ token: 'wrong-token-123456' })).status).toBe(401);
  });

  it('a bad field is a 400 naming its path, and nothing is written', async () => {
    const before = readFileSync(file, 'utf8');
    const v = await view();
    for (const [patch, param] of [
      [{ server: { ...v.config.server, port: 'eighty' } }, 'config.server.port'],
      [{ cluster: { ...v.config.cluster, role: 'master', token: 'changeme' } }, 'config.cluster.token'],
      [{ surprise: true }, 'config'],
    ] as const) {
      const res = await settings({ method: 'PUT', body: { config: { ...v.config, ...patch } } });
      expect(res.status, JSON.stringify(patch)).toBe(400);
      const err = ((await res.json()) as { error: { param: string; message: string } }).error;
      expect(err.param.startsWith(param), `${err.param} for ${JSON.stringify(patch)}`).toBe(true);
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(existsSync(`${file}.bak`)).toBe(false);
  });

  it('the same config again writes nothing and restarts nothing', async () => {
    const res = await settings({ method: 'PUT', body: { config: (await view()).config } });
    expect(await res.json()).toMatchObject({ written: false, restarted: false, url: node.url });
  });

  it('a good config is written (old one kept as .bak, masked secrets kept) and the node restarts on it: a master polling its slave', async () => {
    const slavePort = await freePort();
    const slaveUrl = `http://127.0.0.1:${slavePort}`;
    slave = await startNode({
      models: { s: simText('model-s', '5ms') },
      config: {
        server: { port: slavePort },
        cluster: {
          role: 'slave',
          node_id: 'worker-1',
          token: CLUSTER_TOKEN,
          master_url: node.url,
          public_url: slaveUrl,
          health_interval: '300ms',
          sync_interval: '300ms',
        },
      },
    });
    const before = readFileSync(file, 'utf8');
    const startedAt = healthAnswerSchema.parse(await (await fetch(`${node.url}/health`)).json()).started_at;
    const v = await view();
    const config = {
      ...v.config,
      cluster: {
        ...v.config.cluster,
        role: 'master',
        node_id: 'desk',
        token: CLUSTER_TOKEN,
        slave_urls: [slaveUrl],
        health_interval: '300ms',
      },
    };
    const res = await settings({ method: 'PUT', body: { config } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ written: true, restarted: true, url: node.url, path: file });
    expect(readFileSync(`${file}.bak`, 'utf8')).toBe(before);
    const written = parse(readFileSync(file, 'utf8')) as {
      console: { token: string };
      cluster: { role: string; token: string };
    };
    expect(written.console.token).toBe(TEST_CONSOLE_TOKEN); // the masked value sent back kept the stored secret
    expect(written.cluster).toMatchObject({ role: 'master', token: CLUSTER_TOKEN });
    // Restarted in-process on the same port, with the same console token; then it polls its slave.
    // A restarted node says so with a new started_at (the Settings screen waits on it).
    const health = await eventually(
      async () => {
        const h = healthAnswerSchema.parse(await (await fetch(`${node.url}/health`)).json());
        return h.role === 'master' && h;
      },
      { what: 'the node back as a master', timeoutMs: 20_000 },
    );
    expect(health.started_at).not.toBe(startedAt);
    await eventually(
      async () => {
        const nodes = await node.console<{ nodes: { nodeId: string; healthy: boolean }[] }>(
          '/router/v1/console/cluster/nodes',
        );
        return nodes.nodes.some((n) => n.nodeId === 'worker-1' && n.healthy);
      },
      { what: 'the slave polled and healthy', timeoutMs: 20_000 },
    );
    const models = await node.console<{ models: { id: string }[] }>('/router/v1/console/cluster/models');
    expect(models.models.map((m) => m.id).sort()).toEqual(['model-m', 'model-s']);
    expect(node.output()).toMatch(/restarted, listening on/);
    expect((await view()).restartError).toBeNull();
  });

  it('every answer says nosniff; the console carries its content security policy', async () => {
    for (const path of ['/', '/health', '/v1/models', '/router/v1/console/models']) {
      const res = await fetch(`${node.url}${path}`, { headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` } });
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('content-security-policy'), path).toBe(CONSOLE_CSP);
    }
    const page = await (await fetch(`${node.url}/`)).text();
    expect(page).toContain('http-equiv="Content-Security-Policy"');
    // A streamed answer too (written past fastify's reply).
    const stream = await fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'model-m',
        stream: true,
        max_tokens: 2,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    expect(stream.headers.get('x-content-type-options')).toBe('nosniff');
    await stream.text();
  });
});

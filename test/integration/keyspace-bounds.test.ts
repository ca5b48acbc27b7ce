import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import type { NodeConfigInput } from '../../src-router/config';
import { simText } from '../support/lending-cluster';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';
import { startRedis, type TestRedis } from '../support/redis-server';

// A master and a slave share one real redis-server; someone with access to it makes the routing key 64 MiB (64 times
// the most a node reads of one value). Both nodes go on serving and using Redis (the effective beacon, the runtime
// blob), say why the key is ignored, and take a routing key written again by an operator.

const KEY = 'clutchcall:inference:routing';
const CLUSTER_TOKEN = 'keyspace-bounds-cluster-token-0123456789';
const BIG = 64 * 1024 * 1024;

interface Routing {
  effective: { strategy: string; source: string } | null;
  status: { reporting: boolean; invalidReason: string | null; effective: { strategy: string; source: string } };
}

describe('a keyspace value over the bound is ignored, and the nodes go on', () => {
  let redis: TestRedis;
  let direct: Redis;
  let master: TestNode;
  let slave: TestNode;

  beforeAll(async () => {
    redis = await startRedis();
    direct = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    direct.on('error', () => {});
    const common = (cluster: NodeConfigInput['cluster']): NodeConfigInput => ({
      redis: { url: redis.url },
      routing: { poll_interval: '300ms', strategy: 'round-robin' },
      cluster: { token: CLUSTER_TOKEN, health_interval: '400ms', sync_interval: '400ms', ...cluster },
    });
    const [masterPort, slavePort] = [await freePort(), await freePort()];
    const masterUrl = `http://127.0.0.1:${masterPort}`;
    const slaveUrl = `http://127.0.0.1:${slavePort}`;
    [master, slave] = await Promise.all([
      startNode({
        models: {},
        config: {
          ...common({ role: 'master', node_id: 'master', slave_urls: [slaveUrl] }),
          server: { port: masterPort },
        },
      }),
      startNode({
        models: { a: simText('model-a', '2ms') },
        config: {
          ...common({ role: 'slave', node_id: 's1', master_url: masterUrl, public_url: slaveUrl }),
          server: { port: slavePort },
        },
      }),
    ]);
    await eventually(async () => (await chat()).status === 200, { timeoutMs: 20_000, what: 'the master serving s1' });
  });
  afterAll(async () => {
    await Promise.all([master?.stop(), slave?.stop()]);
    direct?.disconnect();
    await redis?.stop();
  });

  const chat = () =>
    fetch(`${master.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'model-a', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
    });
  const routing = (node: TestNode) => node.console<Routing>('/router/v1/console/runtime.routing');

  it('both nodes ignore a 64 MiB routing key saying why, keep serving and using Redis, and take the key written again', async () => {
    const marks = [master.output().length, slave.output().length];
    await direct.setrange(KEY, BIG - 1, '}');
    const why = `the key '${KEY}' holds 64 MiB, over the 1 MiB a node reads: ignored`;
    for (const node of [master, slave]) {
      const seen = await eventually(
        async () => {
          const r = await routing(node);
          return r.status.invalidReason === why && r.status.reporting && r;
        },
        { timeoutMs: 20_000, what: 'the routing key ignored with its reason' },
      );
      // The last strategy stays; the node still writes its effective beacon to Redis (it is reporting).
      expect(seen.status.effective).toMatchObject({ strategy: 'round-robin', source: 'fallback_invalid_spec' });
      // The runtime blob is read from Redis as ever.
      await eventually(
        async () => (await node.console<{ published: boolean }>('/router/v1/console/runtime.health')).published,
        { what: 'the runtime blob read' },
      );
    }
    await eventually(
      () => [master, slave].every((n, i) => n.output().slice(marks[i]).includes(`keyspace value refused: ${why}`)),
      { what: 'both nodes logging the refused value' },
    );
    for (let i = 0; i < 3; i++) expect((await chat()).status).toBe(200);
    expect(await direct.strlen(KEY)).toBe(BIG);

    // An operator writes routing again: the oversize key is replaced whole, and both nodes apply it.
    const set = await fetch(`${master.url}/router/v1/console/runtime.setRouting`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ strategy: 'random' }),
    });
    expect(set.status).toBe(200);
    expect(await direct.strlen(KEY)).toBeLessThan(1024);
    for (const node of [master, slave])
      await eventually(
        async () => {
          const r = await routing(node);
          return r.status.effective.source === 'routing_key' && r.status.effective.strategy === 'random';
        },
        { timeoutMs: 20_000, what: 'the routing key written again, applied' },
      );
  });
});

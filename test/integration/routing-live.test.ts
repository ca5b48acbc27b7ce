import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfigInput, NodeConfigInput } from '../../src-router/config';
import { buildRoutingView, STRATEGIES } from '../../src-router/routing';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';
import { startRedis, type TestRedis } from '../support/redis-server';

// The live routing module end to end (ROUTE-1, 3, 5..8; issue #5 "Done when"): one suite, run against a node whose
// keyspace is a real redis-server started here, and against a node with the embedded keyspace.
const OPERATOR = 'operator-token-abcdef0123456789';
const KEY = 'clutchcall:inference:routing';
const POLL_MS = 300;
/** "Within one poll": the poll itself plus slack for a loaded 2-core machine. */
const ONE_POLL = POLL_MS + 1_200;
const sim: ModelConfigInput = {
  name: 'chatty',
  backend: 'sim',
  capabilities: ['text'],
  sim: { load_time: '50ms', token_time: '1ms' },
};

interface View {
  strategies: { name: string; requires: string[]; weightable: boolean }[];
  multiScorers: string[];
  desired: { strategy: string; routes_engine: string | null } | null;
  effective: { strategy: string; routes_engine: string | null; source: string } | null;
  engineReporting: boolean;
  inSync: boolean;
  writable: boolean;
  canWrite: boolean;
  keyspaceReachable: boolean;
  status: { reporting: boolean; lastError: string | null; lastPollAt: number | null };
}
interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
}

async function call<T>(node: TestNode, path: string, token: string, body?: unknown): Promise<Answer<T>> {
  const res = await fetch(`${node.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}
const view = async (node: TestNode, token = OPERATOR) =>
  (await call<View>(node, '/router/v1/console/runtime.routing', token)).body;
const setRouting = (node: TestNode, body: { strategy: string; routesEngine?: string }, token = OPERATOR) =>
  call<{ desired?: unknown; error?: { message: string; param?: string; code: string } }>(
    node,
    '/router/v1/console/runtime.setRouting',
    token,
    body,
  );
const chat = (node: TestNode) =>
  fetch(`${node.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chatty', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
  });

function routingSuite(variant: 'redis' | 'embedded') {
  // Behaviours only a real Redis has (outage, TTL on another process): registered in the Redis suite only, never skipped.
  const redisOnly = (name: string, fn: () => Promise<void>, timeout?: number) => {
    if (variant === 'redis') it(name, fn, timeout);
  };
  describe(`live routing module with the ${variant} keyspace`, () => {
    let redis: TestRedis | undefined;
    let direct: Redis | undefined;
    let node: TestNode;
    let readOnly: TestNode | undefined;
    const nodeConfig = (extra: NodeConfigInput = {}): NodeConfigInput => ({
      ...(redis ? { redis: { url: redis.url } } : {}),
      ...extra,
      routing: { poll_interval: `${POLL_MS}ms`, strategy: 'round-robin', ...extra.routing },
      console: { operators: [OPERATOR], ...extra.console },
    });
    /** The routing key as stored, read straight from Redis (Redis variant only). */
    const stored = async () => JSON.parse((await direct!.get(KEY)) ?? 'null') as unknown;

    beforeAll(async () => {
      if (variant === 'redis') {
        redis = await startRedis();
        direct = new Redis(redis.url, { maxRetriesPerRequest: 1, retryStrategy: (n) => Math.min(n * 100, 1_000) });
        direct.on('error', () => {});
      }
      node = await startNode({ models: { chatty: sim }, config: nodeConfig() });
    });
    afterAll(async () => {
      await Promise.all([node?.stop(), readOnly?.stop()]);
      direct?.disconnect();
      await redis?.stop();
    });

    it('reports the config default from its first poll; data-driven strategies; operator can write, console token cannot', async () => {
      const v = await eventually(
        async () => {
          const x = await view(node);
          return x.engineReporting ? x : undefined;
        },
        { timeoutMs: ONE_POLL, what: 'first beacon' },
      );
      expect(v.strategies.map((s) => s.name)).toEqual(STRATEGIES.map((s) => s.name));
      expect(v.strategies.find((s) => s.name === 'least-kv-cache')!.requires).toEqual([
        'kv_cache_usage',
        'kv_cache_usage_cpu',
      ]);
      expect(v.multiScorers).toEqual(['least-request', 'least-kv-cache', 'prefix-affinity']);
      expect(v).toMatchObject({
        desired: null,
        effective: { strategy: 'round-robin', routes_engine: null, source: 'config_default' },
        inSync: true,
        writable: true,
        canWrite: true,
        keyspaceReachable: true,
      });
      expect(await view(node, TEST_CONSOLE_TOKEN)).toMatchObject({
        writable: true,
        canWrite: false,
        engineReporting: true,
      });
      // The runtime blob lives in the same keyspace (RT-1).
      const health = await eventually(
        async () => {
          const h = (
            await call<{ published: boolean; blob?: { selfTests: { name: string; detail: string }[] } }>(
              node,
              '/router/v1/console/runtime.health',
              TEST_CONSOLE_TOKEN,
            )
          ).body;
          return h.published ? h : undefined;
        },
        { what: 'runtime blob' },
      );
      const keyspaceTest = health.blob!.selfTests.find((t) => t.name === 'keyspace reachable')!;
      expect(keyspaceTest.detail).toBe(`${redis ? `${redis.url}` : 'embedded'} answered`);
      if (direct)
        expect(JSON.parse((await direct.get('clutchcall:inference:runtime'))!)).toMatchObject({ engine: 'routerdesk' });
    });

    it('setRouting → the effective beacon within one poll, in sync; routesEngine absent from the key unless given (ROUTE-5/6)', async () => {
      const started = Date.now();
      const res = await setRouting(node, { strategy: 'least-request' });
      expect(res).toEqual({ status: 200, body: { desired: { strategy: 'least-request' } } });
      if (direct) {
        expect(await stored()).toEqual({ strategy: 'least-request' });
        expect(await direct.get(KEY)).not.toContain('routes_engine');
      }
      const v = await eventually(
        async () => {
          const x = await view(node);
          return x.effective?.strategy === 'least-request' ? x : undefined;
        },
        { timeoutMs: ONE_POLL, what: 'effective = desired' },
      );
      expect(Date.now() - started).toBeLessThan(ONE_POLL);
      expect(v).toMatchObject({
        desired: { strategy: 'least-request', routes_engine: null },
        effective: { strategy: 'least-request', routes_engine: null, source: 'routing_key' },
        engineReporting: true,
        inSync: true,
        status: { reporting: true, lastError: null },
      });
      if (direct) {
        const ttl = await direct.pttl(`${KEY}.effective`);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(3 * POLL_MS);
      }
    });

    it('applies a changed strategy and profile without a restart; a strategy-only write keeps the requested profile', async () => {
      const pid = node.proc.pid;
      const multi = 'multi:least-request:3,least-kv-cache:1';
      expect((await setRouting(node, { strategy: multi, routesEngine: 'clutch-layers' })).status).toBe(200);
      if (direct) expect(await stored()).toEqual({ strategy: multi, routes_engine: 'clutch-layers' });
      await eventually(
        async () => {
          const x = await view(node);
          return x.effective?.strategy === multi && x.effective.routes_engine === 'clutch-layers' && x.inSync;
        },
        { timeoutMs: ONE_POLL, what: 'multi spec and profile in force' },
      );
      expect((await setRouting(node, { strategy: 'least-kv-cache' })).body).toEqual({
        desired: { strategy: 'least-kv-cache', routes_engine: 'clutch-layers' },
      });
      await eventually(async () => (await view(node)).effective?.strategy === 'least-kv-cache', {
        timeoutMs: ONE_POLL,
        what: 'least-kv-cache in force',
      });
      expect(node.proc.pid).toBe(pid);
      expect(node.proc.exitCode).toBeNull();
      expect((await chat(node)).status).toBe(200);
    });

    it('refuses invalid specs with the exact ROUTE-3 messages and publishes nothing', async () => {
      const before = await view(node);
      const rows: [string, string][] = [
        ['multi:', 'Enter at least one name:weight pair.'],
        ['multi:least-request:3,,least-kv-cache:1', 'Remove the empty entry and separate pairs with single commas.'],
        ['multi:least-request', '"least-request" is not a name:weight pair (for example least-request:3).'],
        [
          'multi:random:2',
          '"random" is not weightable. Weightable scorers: least-request, least-kv-cache, prefix-affinity.',
        ],
        ['multi:least-request:0', 'The weight of "least-request" must be a number above zero.'],
        ['multi:least-kv-cache:-1', 'The weight of "least-kv-cache" must be a number above zero.'],
      ];
      for (const [strategy, message] of rows) {
        const res = await setRouting(node, { strategy });
        expect(res.status, strategy).toBe(400);
        expect(res.body.error, strategy).toMatchObject({ message, param: 'strategy' });
      }
      const badProfile = await setRouting(node, { strategy: 'random', routesEngine: 'vllm' });
      expect(badProfile).toMatchObject({ status: 400, body: { error: { param: 'routesEngine' } } });
      const after = await view(node);
      expect(after.desired).toEqual(before.desired);
      expect(after.effective).toEqual(before.effective);
    });

    it('a non-operator reads but cannot write: canWrite false, 403 naming console.operators (ROUTE-8)', async () => {
      const v = await view(node, TEST_CONSOLE_TOKEN);
      expect(v).toMatchObject({ writable: true, canWrite: false });
      expect(v.effective).not.toBeNull();
      const res = await setRouting(node, { strategy: 'random' }, TEST_CONSOLE_TOKEN);
      expect(res.status).toBe(403);
      expect(res.body.error!.message).toContain('console.operators');
      expect((await view(node)).desired?.strategy).not.toBe('random');
      expect((await call(node, '/router/v1/console/runtime.routing', 'not-a-token')).status).toBe(401);
    });

    it('a read-only deployment: writable false, 403 naming console.routing_writes_enabled, reads keep working (ROUTE-8)', async () => {
      readOnly = await startNode({
        models: {},
        config: nodeConfig({
          console: { routing_writes_enabled: false },
          routing: { routing_key: 'readonly:routing' },
        }),
      });
      const v = await eventually(
        async () => {
          const x = await view(readOnly!);
          return x.engineReporting ? x : undefined;
        },
        { timeoutMs: ONE_POLL, what: 'read-only node beacon' },
      );
      expect(v).toMatchObject({ writable: false, canWrite: true, effective: { strategy: 'round-robin' } });
      for (const token of [OPERATOR, TEST_CONSOLE_TOKEN]) {
        const res = await setRouting(readOnly, { strategy: 'least-request' }, token);
        expect(res.status).toBe(403);
        expect(res.body.error!.message).toContain('console.routing_writes_enabled');
      }
      expect((await call(readOnly, '/router/v1/console/runtime.health', TEST_CONSOLE_TOKEN)).status).toBe(200);
      expect((await view(readOnly)).desired).toBeNull();
      await readOnly.stop();
    });

    redisOnly(
      'a broken spec written past the console: the module keeps what it applied, source fallback_invalid_spec, pending pickup',
      async () => {
        const applied = (await view(node)).effective!.strategy;
        await direct!.set(KEY, JSON.stringify({ strategy: 'multi:least-request:3,bogus:1' }));
        const v = await eventually(
          async () => {
            const x = await view(node);
            return x.effective?.source === 'fallback_invalid_spec' ? x : undefined;
          },
          { timeoutMs: ONE_POLL, what: 'fallback after an invalid spec' },
        );
        expect(v).toMatchObject({ effective: { strategy: applied }, engineReporting: true, inSync: false });
        expect((await setRouting(node, { strategy: applied })).status).toBe(200);
        await eventually(async () => (await view(node)).effective?.source === 'routing_key', {
          timeoutMs: ONE_POLL,
          what: 'back on the routing key',
        });
      },
    );

    redisOnly(
      'Redis killed: requests keep being routed, not reporting; Redis back on the same port: the beacon returns',
      async () => {
        expect((await chat(node)).status).toBe(200);
        await redis!.kill();
        const down = await eventually(
          async () => {
            const x = await view(node);
            return !x.engineReporting && !x.keyspaceReachable && !x.status.reporting ? x : undefined;
          },
          { timeoutMs: 3 * POLL_MS + 2_000, what: 'not reporting while Redis is down' },
        );
        expect(down).toMatchObject({ effective: null, desired: null, inSync: true });
        expect(down.status.lastError).toMatch(/redis/i);
        // Hold the outage for several failed polls (and reconnect attempts), routing client requests all along.
        const killedAt = Date.now();
        await eventually(
          async () => {
            expect((await chat(node)).status).toBe(200);
            const x = await view(node);
            expect(x.status.reporting).toBe(false);
            return x.status.lastPollAt! > killedAt + 2_000;
          },
          { timeoutMs: 5_000, everyMs: 200, what: 'polls failing for 2 s' },
        );
        const refused = await setRouting(node, { strategy: 'random' });
        expect(refused).toMatchObject({ status: 503, body: { error: { code: 'keyspace_unavailable' } } });
        await redis!.restart();
        // Reconnect backoff is capped at 5 s, then one poll republishes the beacon.
        const back = await eventually(
          async () => {
            const x = await view(node);
            return x.engineReporting && x.keyspaceReachable && x.status.reporting ? x : undefined;
          },
          { timeoutMs: 5_000 + ONE_POLL + 2_000, everyMs: 100, what: 'beacon back after the restart' },
        );
        // The restarted server is empty: nothing is requested, so the module reports its config default.
        expect(back.effective).toMatchObject({ source: 'config_default', strategy: 'round-robin' });
        expect(JSON.parse((await direct!.get(`${KEY}.effective`))!)).toEqual(back.effective);
        expect((await chat(node)).status).toBe(200);
      },
    );

    redisOnly('beacon expiry: once the node stops, the TTL runs out and the engine reads not reporting', async () => {
      expect((await setRouting(node, { strategy: 'least-request' })).status).toBe(200);
      await eventually(async () => (await view(node)).effective?.strategy === 'least-request', {
        timeoutMs: ONE_POLL,
        what: 'least-request in force',
      });
      const ttl = await direct!.pttl(`${KEY}.effective`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(3 * POLL_MS);
      await node.stop();
      const readView = async () =>
        buildRoutingView({
          routingKey: KEY,
          strategies: STRATEGIES,
          desiredRaw: await direct!.get(KEY),
          effectiveRaw: await direct!.get(`${KEY}.effective`),
          writable: true,
          canWrite: true,
        });
      const gone = await eventually(
        async () => {
          const x = await readView();
          return !x.engineReporting ? x : undefined;
        },
        { timeoutMs: 3 * POLL_MS + 1_000, what: 'beacon expired' },
      );
      // Desired state stays: it is adopted when a module polls again.
      expect(gone).toMatchObject({ desired: { strategy: 'least-request' }, effective: null, inSync: false });
    });
  });
}

routingSuite('redis');
routingSuite('embedded');

import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import type { ModelConfigInput } from '../../src-router/config';
import { type RuntimeBlobView as RuntimeBlob, type RuntimeHealth, resolveExecutable } from '../../src-router/runtime';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode, tempDir } from '../support/node-harness';

// The runtime blob (RT-1..6, issue #5): each node publishes it into its keyspace; runtime.health reads only it, and
// a master reads a slave's through the cluster API.
const TOKEN = 'runtime-health-cluster-token-0123456789';
const talker: ModelConfigInput = {
  name: 'talker',
  backend: 'sim',
  capabilities: ['text'],
  contextsize: 4096,
  sim: { load_time: '50ms', token_time: '1ms' },
};

async function health(
  node: TestNode,
  query = '',
): Promise<{ status: number; body: RuntimeHealth & { error?: { code: string; message: string } } }> {
  const res = await fetch(`${node.url}/router/v1/console/runtime.health${query}`, {
    headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
  });
  return { status: res.status, body: (await res.json()) as never };
}
const blobOf = async (node: TestNode, query = ''): Promise<RuntimeBlob | undefined> => {
  const { status, body } = await health(node, query);
  return status === 200 && body.published ? body.blob : undefined;
};
const portOf = (node: TestNode) => Number(new URL(node.url).port);

describe('runtime blob of a standalone node', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startNode({ models: { talker }, config: { routing: { poll_interval: '300ms' } } });
  });
  afterAll(async () => node?.stop());

  it('publishes host, version, uptime, engine, CPU, memory and the boot self-tests in order; no GPU without nvidia-smi', async () => {
    const blob = await eventually(() => blobOf(node), { what: 'a published blob' });
    const { version } = (await (await fetch(`${node.url}/health`)).json()) as { version: string };
    expect(blob).toMatchObject({ host: hostname(), version, engine: 'routerdesk' });
    expect(blob.uptime).toBeGreaterThanOrEqual(0);
    expect(blob.uptime).toBeLessThan(120_000);
    expect(blob.cpu).toMatchObject({ model: expect.any(String), cores: expect.any(Number) });
    expect(blob.cpu!.loadavg).toBeGreaterThanOrEqual(0);
    expect(blob.memory!.total).toBeGreaterThan(0);
    expect(blob.memory!.used).toBeGreaterThan(0);
    expect(blob.memory!.used).toBeLessThanOrEqual(blob.memory!.total!);
    if (!(await resolveExecutable('nvidia-smi'))) expect(blob).not.toHaveProperty('gpu');
    const tests = blob.selfTests!;
    expect(tests.map((t) => t.name)).toEqual([
      'store writable',
      'store free space',
      'engine sim (built in)',
      'keyspace reachable',
      `port ${portOf(node)} bound`,
    ]);
    for (const t of tests) {
      expect(Object.keys(t).sort()).toEqual(['detail', 'ms', 'name', 'status']);
      expect(t.detail?.length).toBeGreaterThan(0);
      expect(t.ms).toBeGreaterThanOrEqual(0);
    }
    expect(tests.map((t) => t.status)).toEqual([
      'pass',
      expect.stringMatching(/^(pass|warn)$/),
      'pass',
      'pass',
      'pass',
    ]);
    expect(tests[0].detail).toContain(`${node.dir}/store`);
    expect(tests[3].detail).toBe('embedded answered');
    expect(tests[4].detail).toBe(`127.0.0.1:${portOf(node)} accepting connections`);
  });

  it('has no serving config until a model is loaded; then servedModel and maxModelLen (RT-5)', async () => {
    const before = (await blobOf(node))!;
    expect(before).not.toHaveProperty('servingConfig');
    expect(before.cpu).not.toHaveProperty('maxContext');
    const res = await fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'talker', messages: [{ role: 'user', content: 'hello' }], max_tokens: 2 }),
    });
    expect(res.status).toBe(200);
    const after = await eventually(
      async () => {
        const b = await blobOf(node);
        return b?.servingConfig ? b : undefined;
      },
      { timeoutMs: 5_000, what: 'serving config in the blob' },
    );
    expect(after.servingConfig).toEqual({ servedModel: 'talker', maxModelLen: 4096 });
    expect(after.cpu!.maxContext).toBe(4096);
    expect(after.memory!.mappedModels).toBe(1);
    expect(after.selfTests).toEqual(before.selfTests);
    expect(after.uptime!).toBeGreaterThan(before.uptime!);
  });
});

describe('runtime blob across a cluster', () => {
  let master: TestNode;
  let slave: TestNode;

  beforeAll(async () => {
    const [mp, sp] = [await freePort(), await freePort()];
    const url = (p: number) => `http://127.0.0.1:${p}`;
    slave = await startNode({
      dir: tempDir(),
      models: { talker },
      config: {
        server: { port: sp },
        cluster: {
          role: 'slave',
          node_id: 'gpu-s',
          token: TOKEN,
          master_url: url(mp),
          public_url: url(sp),
          sync_interval: '500ms',
        },
      },
    });
    master = await startNode({
      dir: tempDir(),
      models: {},
      config: {
        server: { port: mp },
        cluster: { role: 'master', node_id: 'master', token: TOKEN, slave_urls: [url(sp)], health_interval: '500ms' },
        models: { config_dir: '' },
      },
    });
  });
  afterAll(async () => {
    await Promise.all([master?.stop(), slave?.stop()]);
  });

  it("the master reads a slave's blob with ?node=<id>; its own without; an unknown node is a 404", async () => {
    const remote = await eventually(() => blobOf(master, '?node=gpu-s'), { what: 'the slave blob through the master' });
    const own = await eventually(() => blobOf(slave), { what: 'the slave blob on the slave' });
    expect(remote.selfTests).toEqual(own.selfTests);
    expect(remote.selfTests!.at(-1)!.name).toBe(`port ${portOf(slave)} bound`);
    expect(remote.selfTests!.map((t) => t.name)).toContain('engine sim (built in)');
    expect(remote).toMatchObject({ host: own.host, version: own.version, engine: 'routerdesk' });
    const mine = await eventually(() => blobOf(master), { what: 'the master blob' });
    expect(mine.selfTests!.at(-1)!.name).toBe(`port ${portOf(master)} bound`);
    expect(mine.selfTests!.map((t) => t.name)).not.toContain('engine sim (built in)');
    expect((await health(master, '?node=master')).body).toMatchObject({ published: true });
    const unknown = await health(master, '?node=nope');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'node_not_found' });
  });

  it('a known slave that does not answer: nothing published, with the reason (not a 500)', async () => {
    await slave.stop();
    const res = await health(master, '?node=gpu-s');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      published: false,
      reason: expect.stringContaining("node 'gpu-s' did not answer"),
    });
    expect((await health(master)).body.published).toBe(true);
  });
});

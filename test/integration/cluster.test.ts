import { join } from 'node:path';
import Database from 'better-sqlite3';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import type { ModelConfigInput, NodeConfigInput } from '../../src-router/config';
import { clusterLanesSchema } from '../../src-router/contract';
import { eventually, runCli, startNode, type TestNode, tempDir } from '../support/node-harness';

// A master and two slaves as separate processes on loopback ports, sim engines behind the slaves
// (ROLE-1..5, HEALTH-1/2/4, ID-2/3/4).
const TOKEN = 'cluster-test-token-0123456789';
const sim = (name: string, extra: Partial<ModelConfigInput> = {}): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['text'],
  sim: { load_time: '100ms', token_time: '2ms' },
  ...extra,
});

interface NodeView {
  nodeId: string;
  url: string | null;
  healthy: boolean;
  version: string | null;
  lastError: string | null;
  models: number;
  local: boolean;
}
interface ClusterModel {
  id: string;
  baseId: string;
  replicas: { nodeId: string; localId: string; available: boolean }[];
}

describe('master and slaves', () => {
  let master: TestNode;
  let slaveA: TestNode;
  let slaveB: TestNode;
  let openai: OpenAI;
  const ports = { master: 0, a: 0, b: 0, c: 0 };
  const url = (p: number) => `http://127.0.0.1:${p}`;
  const dirs = { master: tempDir(), a: tempDir(), b: tempDir() };
  const slaveModels = {
    a: { llama: sim('llama'), qwen: sim('qwen', { contextsize: 2048 }) },
    b: { llama: sim('llama'), qwen: sim('qwen', { contextsize: 8192 }) },
  };
  const slaveConfig = (id: string, port: number): NodeConfigInput => ({
    server: { port },
    cluster: {
      role: 'slave',
      node_id: id,
      token: TOKEN,
      master_url: url(ports.master),
      public_url: url(port),
      sync_interval: '500ms',
    },
  });
  const masterConfig = (): NodeConfigInput => ({
    server: { port: ports.master },
    cluster: {
      role: 'master',
      node_id: 'master',
      token: TOKEN,
      slave_urls: [url(ports.a), url(ports.b), url(ports.c)],
      health_interval: '500ms',
    },
    models: { config_dir: '' },
  });
  const nodes = async () => (await master.console<{ nodes: NodeView[] }>('/router/v1/console/cluster/nodes')).nodes;
  const models = async () =>
    (await master.console<{ models: ClusterModel[] }>('/router/v1/console/cluster/models')).models;
  const chat = (model: string) =>
    openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 });

  beforeAll(async () => {
    for (const k of Object.keys(ports) as (keyof typeof ports)[]) ports[k] = await freePort();
    [slaveA, slaveB] = await Promise.all([
      startNode({ dir: dirs.a, models: slaveModels.a, config: slaveConfig('gpu-a', ports.a) }),
      startNode({ dir: dirs.b, models: slaveModels.b, config: slaveConfig('gpu-b', ports.b) }),
    ]);
    master = await startNode({ dir: dirs.master, models: {}, config: masterConfig() });
    openai = new OpenAI({ baseURL: `${master.url}/v1`, apiKey: 'x', maxRetries: 0 });
  });
  afterAll(async () => {
    await Promise.all([master?.stop(), slaveA?.stop(), slaveB?.stop()]);
  });

  it('slaves register and are polled: both healthy with their build', async () => {
    await eventually(async () => (await nodes()).filter((x) => x.healthy).length === 3, {
      what: 'both slaves healthy',
    });
    const list = await nodes();
    expect(list.map((n) => [n.nodeId, n.local, n.models])).toEqual([
      ['master', true, 0],
      ['gpu-a', false, 2],
      ['gpu-b', false, 2],
      ['(unknown)', false, 0],
    ]);
    expect(list[1].version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('merges the listing: identical hashes are one model, a conflicting config gets a stable suffix (ID-2)', async () => {
    const ids = (await openai.models.list()).data.map((m) => m.id).sort();
    expect(ids).toEqual(['llama', 'qwen', 'qwen-2']);
    const merged = await models();
    expect(merged.find((m) => m.id === 'llama')!.replicas.map((r) => r.nodeId)).toEqual(['gpu-a', 'gpu-b']);
    const qwens = merged.filter((m) => m.baseId === 'qwen');
    expect(qwens.map((m) => m.replicas.length)).toEqual([1, 1]);
    expect(new Set(qwens.map((m) => m.replicas[0].nodeId))).toEqual(new Set(['gpu-a', 'gpu-b']));
  });

  it('forwards with the public ID rewritten, streamed and not, and rotates replicas across nodes (ID-3, ID-4)', async () => {
    for (const id of ['llama', 'qwen', 'qwen-2']) expect((await chat(id)).model).toBe(id);
    const stream = await openai.chat.completions.create({
      model: 'qwen-2',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 5,
      stream: true,
    });
    const seen = new Set<string>();
    let n = 0;
    for await (const c of stream) {
      seen.add(c.model);
      n++;
    }
    expect([...seen]).toEqual(['qwen-2']);
    expect(n).toBeGreaterThanOrEqual(5);
    const since = Date.now();
    for (let i = 0; i < 4; i++) await chat('llama');
    // Analytics rows are written in batches off the request path (issue #9): wait for these four.
    const rows = await eventually(
      () => {
        const db = new Database(join(dirs.master, 'store', 'router.db'), { readonly: true });
        try {
          const r = db
            .prepare("SELECT node_id FROM request_analytics WHERE model = 'llama' AND finished_at >= ? ORDER BY id")
            .all(since) as { node_id: string }[];
          return r.length === 4 && r;
        } finally {
          db.close();
        }
      },
      { what: 'four llama rows' },
    );
    expect(rows.map((r) => r.node_id).sort()).toEqual(['gpu-a', 'gpu-a', 'gpu-b', 'gpu-b']);
  });

  it('a routing-only master starts no engine of its own (ROLE-5)', async () => {
    expect((await master.console<{ lanes: unknown[] }>('/router/v1/console/lanes')).lanes).toEqual([]);
  });

  it('the lane state of every node for the console: its own, each slave’s runtime status, a member that cannot answer with its error', async () => {
    const { nodes: lanes } = clusterLanesSchema.parse(await master.console('/router/v1/console/cluster/lanes'));
    expect(lanes.map((n) => [n.nodeId, n.local, n.status === null])).toEqual([
      ['master', true, false],
      ['gpu-a', false, false],
      ['gpu-b', false, false],
      ['(unknown)', false, true],
    ]);
    expect(lanes[0].status?.models).toEqual([]);
    // The requests above loaded llama on both slaves.
    for (const slave of [lanes[1], lanes[2]])
      expect(slave.status?.models.find((m) => m.localId === 'llama')).toMatchObject({
        loaded: true,
        active: 0,
        queued: 0,
      });
    expect(lanes[3].error).toContain(url(ports.c));
  });

  it('a killed slave is unhealthy within a health interval, the others keep serving; restarted, it is back (HEALTH-2)', async () => {
    const qwenOnB = (await models()).find((m) => m.baseId === 'qwen' && m.replicas[0].nodeId === 'gpu-b')!.id;
    slaveB.proc.kill('SIGKILL');
    await eventually(async () => (await nodes()).find((n) => n.nodeId === 'gpu-b')!.healthy === false, {
      timeoutMs: 3000,
      what: 'gpu-b unhealthy',
    });
    const down = await fetch(`${master.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: qwenOnB, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(down.status).toBe(503);
    expect(((await down.json()) as { error: { code: string } }).error.code).toBe('model_unavailable');
    // Client lists show only what can be served now; the console still shows it, unavailable (issue #9).
    const listed = async () =>
      ((await (await fetch(`${master.url}/v1/models`)).json()) as { data: { id: string }[] }).data.map((m) => m.id);
    const tags = async () =>
      ((await (await fetch(`${master.url}/api/tags`)).json()) as { models: { name: string }[] }).models.map(
        (m) => m.name,
      );
    expect(await listed()).not.toContain(qwenOnB);
    expect(await tags()).not.toContain(qwenOnB);
    expect(await listed()).toContain('llama');
    expect((await models()).find((m) => m.id === qwenOnB)!.replicas.every((r) => !r.available)).toBe(true);
    for (let i = 0; i < 3; i++) expect((await chat('llama')).model).toBe('llama');
    slaveB = await startNode({ dir: dirs.b, models: slaveModels.b, config: slaveConfig('gpu-b', ports.b) });
    await eventually(async () => (await nodes()).find((n) => n.nodeId === 'gpu-b')!.healthy, {
      timeoutMs: 5000,
      what: 'gpu-b healthy again',
    });
    expect((await chat(qwenOnB)).model).toBe(qwenOnB);
    expect(await listed()).toContain(qwenOnB);
    // The suffix stayed with its group.
    expect((await models()).find((m) => m.id === qwenOnB)!.replicas[0].nodeId).toBe('gpu-b');
  });

  it('node API: wrong token → 401, registration from an unlisted URL → 403, duplicate node id → 409 (all logged)', async () => {
    const snap = (await (
      await fetch(`${slaveA.url}/router/v1/node/snapshot`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as Record<string, unknown>;
    expect(
      (
        await fetch(`${master.url}/router/v1/node/snapshot`, {
          headers: { authorization: 'Bearer wrong-token-xxxxxxxx' },
        })
      ).status,
    ).toBe(401);
    const register = (body: unknown) =>
      fetch(`${master.url}/router/v1/node/register`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const unlisted = await register({ ...snap, nodeId: 'intruder', publicUrl: 'http://127.0.0.1:1' });
    expect(unlisted.status).toBe(403);
    const dup = await register({ ...snap, nodeId: 'gpu-a', publicUrl: url(ports.c) });
    expect(dup.status).toBe(409);
    expect(((await dup.json()) as { error: { message: string } }).error.message).toMatch(
      /node_id 'gpu-a' is already registered/,
    );
    // Issue #9: a node registering under another slave's URL with its own id and models replaces nothing.
    const before = (await models())
      .filter((m) => m.replicas.some((r) => r.nodeId === 'gpu-b'))
      .map((m) => m.id)
      .sort();
    const forged = await register({ ...snap, nodeId: 'forger', publicUrl: url(ports.b), models: [] });
    expect(forged.status).toBe(409);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('registration_mismatch');
    expect(
      (await models())
        .filter((m) => m.replicas.some((r) => r.nodeId === 'gpu-b'))
        .map((m) => m.id)
        .sort(),
    ).toEqual(before);
    expect((await nodes()).find((n) => n.nodeId === 'gpu-b')!.healthy).toBe(true);
    await eventually(
      () =>
        /not in cluster.slave_urls/.test(master.output()) &&
        /duplicate node id refused/.test(master.output()) &&
        /reports another node_id/.test(master.output()),
      { what: 'refusals logged' },
    );
  });

  it('a restarted master shows the last known cluster while it re-polls', async () => {
    await master.stop();
    slaveB.proc.kill('SIGKILL');
    master = await startNode({ dir: dirs.master, models: {}, config: masterConfig() });
    const list = await nodes();
    const b = list.find((n) => n.nodeId === 'gpu-b')!;
    expect(b).toMatchObject({ healthy: false, models: 2 });
    expect(b.version).toMatch(/^\d+\./);
    expect(list.find((n) => n.nodeId === 'gpu-a')!.healthy).toBe(true);
  });
});

describe('start-up refusals (ROLE-2, ROLE-3)', () => {
  const tryStart = async (config: NodeConfigInput) => {
    const dir = tempDir();
    const file = join(dir, 'node.yaml');
    const { writeFileSync } = await import('node:fs');
    const { stringify } = await import('yaml');
    writeFileSync(file, stringify({ ...config, cluster: { store_dir: join(dir, 'store'), ...config.cluster } }));
    return runCli(['node', '--config', file]);
  };

  it('a master with a placeholder token does not start', async () => {
    const r = await tryStart({ cluster: { role: 'master', token: 'changeme' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /cluster.token: a master needs the cluster's shared token; "changeme" is empty, a placeholder/,
    );
  });

  it('a slave without master_url or public_url does not start', async () => {
    const r = await tryStart({ cluster: { role: 'slave', token: TOKEN } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cluster.master_url: a slave needs/);
    expect(r.stderr).toMatch(/cluster.public_url: a slave needs/);
  });
});

import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import type { ModelConfigInput, NodeConfigInput } from '../../src-router/config';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode, tempDir, wavFile } from '../support/node-harness';

// Assets and split recipes across real processes (ASSET-2..4): a master and two slaves on loopback ports, sim
// engines behind the slaves, the master routing only. Asset transfers go through the node API by verified hash.
const TOKEN = 'assets-cluster-token-0123456789';
const LIMIT = 1024 * 1024; // the master's models.asset_max_bytes
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const weights = randomBytes(256 * 1024 + 17);
const big = randomBytes(2 * LIMIT);
const WEIGHTS = sha256(weights);
const BIG = sha256(big);

interface Reply<T = any> {
  status: number;
  body: T;
}
async function call<T = any>(
  node: TestNode,
  method: string,
  path: string,
  opts: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${opts.token ?? TEST_CONSOLE_TOKEN}`,
      ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...opts.headers,
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: body as T };
}

describe('assets and split recipes across a master and two slaves', () => {
  let master: TestNode;
  let slaveA: TestNode;
  let slaveB: TestNode;
  let openai: OpenAI;
  const dirs = { master: tempDir(), a: tempDir(), b: tempDir() };
  const node = (
    n: () => TestNode,
    method: string,
    path: string,
    opts: { body?: unknown; headers?: Record<string, string> } = {},
  ) => call(n(), method, path, { ...opts, token: TOKEN });
  const fetchAsset = (n: TestNode, body: Record<string, unknown>) =>
    call(n, 'POST', '/router/v1/console/assets/fetch', { body });
  const lanes = async (n: TestNode) =>
    (await n.console<{ lanes: { lane: string; loaded: string | null; state: string }[] }>('/router/v1/console/lanes'))
      .lanes;

  beforeAll(async () => {
    const [pm, pa, pb] = [await freePort(), await freePort(), await freePort()];
    const url = (p: number) => `http://127.0.0.1:${p}`;
    // Slave A keeps weights in its shared folder, and a file outside its roots that must never be reachable. Every
    // node's assets go to models.shared_dir: the models config folder is never an asset source or target (issue #9).
    mkdirSync(join(dirs.a, 'shared', 'weights'), { recursive: true });
    writeFileSync(join(dirs.a, 'shared', 'weights', 'tiny.gguf'), weights);
    writeFileSync(join(dirs.a, 'shared', 'weights', 'big.bin'), big);
    writeFileSync(join(dirs.a, 'secret.txt'), 'not for the cluster');
    for (const d of Object.values(dirs)) mkdirSync(join(d, 'shared'), { recursive: true });
    const slave = (id: string, port: number): NodeConfigInput => ({
      server: { port },
      cluster: {
        role: 'slave',
        node_id: id,
        token: TOKEN,
        master_url: url(pm),
        public_url: url(port),
        sync_interval: '500ms',
      },
      models: { shared_dir: join(dirs[id === 'gpu-a' ? 'a' : 'b'], 'shared') },
    });
    const sim = (name: string, caps: ModelConfigInput['capabilities']): ModelConfigInput => ({
      name,
      backend: 'sim',
      capabilities: caps,
      sim: { load_time: '200ms', token_time: '2ms', audio_time_per_second: '50ms' },
    });
    [slaveA, slaveB] = await Promise.all([
      startNode({ dir: dirs.a, models: { chatty: sim('chatty', ['text']) }, config: slave('gpu-a', pa) }),
      startNode({ dir: dirs.b, models: { ears: sim('ears', ['transcription']) }, config: slave('gpu-b', pb) }),
    ]);
    master = await startNode({
      dir: dirs.master,
      models: {},
      config: {
        server: { port: pm },
        cluster: {
          role: 'master',
          node_id: 'master',
          token: TOKEN,
          slave_urls: [url(pa), url(pb)],
          health_interval: '500ms',
        },
        models: { asset_max_bytes: LIMIT, shared_dir: join(dirs.master, 'shared') },
      },
    });
    openai = new OpenAI({ baseURL: `${master.url}/v1`, apiKey: 'x', maxRetries: 0 });
    await eventually(
      async () =>
        (await master.console<{ nodes: { healthy: boolean }[] }>('/router/v1/console/cluster/nodes')).nodes.every(
          (n) => n.healthy,
        ),
      { what: 'cluster healthy' },
    );
  });
  afterAll(async () => {
    await Promise.all([master?.stop(), slaveA?.stop(), slaveB?.stop()]);
  });

  it("a slave's node API lists its roots with verified hashes and serves ranges; the cluster token is required", async () => {
    const inv = await eventually(
      async () => {
        const r = await node(() => slaveA, 'GET', '/router/v1/node/assets/inventory?root=shared&path=weights');
        return r.body.entries?.every((e: { sha256: string | null }) => e.sha256) && r;
      },
      { what: 'inventory hashed' },
    );
    expect(
      inv.body.entries.map((e: { path: string; sha256: string; size: number }) => [e.path, e.sha256, e.size]),
    ).toEqual([
      ['weights/big.bin', BIG, big.length],
      ['weights/tiny.gguf', WEIGHTS, weights.length],
    ]);
    expect((await call(slaveA, 'GET', '/router/v1/node/assets/inventory')).status).toBe(401); // console token is not the cluster token
    const part = await fetch(`${slaveA.url}/router/v1/node/assets/by-hash/${WEIGHTS}`, {
      headers: { authorization: `Bearer ${TOKEN}`, range: 'bytes=100-199' },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${weights.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(weights.subarray(100, 200));
    const head = await fetch(`${slaveA.url}/router/v1/node/assets/by-hash/${WEIGHTS}`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect([head.status, head.headers.get('content-length'), head.headers.get('x-asset-sha256')]).toEqual([
      200,
      String(weights.length),
      WEIGHTS,
    ]);
    const beyond = await node(() => slaveA, 'GET', `/router/v1/node/assets/by-hash/${WEIGHTS}`, {
      headers: { range: `bytes=${weights.length}-` },
    });
    expect(beyond.status).toBe(416);
  });

  it('path attacks on the inventory and hash lookups are refused (ASSET-3)', async () => {
    for (const path of ['..', '../..', 'weights/../../secret.txt', join(dirs.a, 'secret.txt'), '/etc']) {
      const r = await node(
        () => slaveA,
        'GET',
        `/router/v1/node/assets/inventory?root=shared&path=${encodeURIComponent(path)}`,
      );
      expect([r.status, r.body.error?.code], path).toEqual([403, 'path_outside_root']);
    }
    const root = await node(
      () => slaveA,
      'GET',
      `/router/v1/node/assets/inventory?root=${encodeURIComponent('../..')}`,
    );
    expect([root.status, root.body.error.code]).toEqual([404, 'unknown_root']);
    const hash = await node(
      () => slaveA,
      'GET',
      `/router/v1/node/assets/by-hash/${encodeURIComponent('../../secret.txt')}`,
    );
    expect([hash.status, hash.body.error.code]).toEqual([400, 'invalid_hash']);
    const outside = await node(
      () => slaveA,
      'GET',
      `/router/v1/node/assets/by-hash/${sha256(Buffer.from('not for the cluster'))}`,
    );
    expect(outside.status).toBe(404);
    const viaConsole = await call(master, 'GET', '/router/v1/console/assets/inventory?root=shared&path=..');
    expect(viaConsole.status).toBe(403);
  });

  it("the master's console fetches the weights from slave A by hash: verified, on disk under its root, bound", async () => {
    const r = await fetchAsset(master, {
      nodeId: 'gpu-a',
      sha256: WEIGHTS,
      name: 'weights/tiny.gguf',
      expectedSize: weights.length,
    });
    expect(r.status).toBe(200);
    const path = join(realpathSync(dirs.master), 'shared', 'tiny.gguf');
    expect(r.body).toMatchObject({
      result: 'bound',
      sha256: WEIGHTS,
      root: 'shared',
      relPath: 'tiny.gguf',
      path,
      size: weights.length,
      downloaded: weights.length,
    });
    expect(sha256(readFileSync(path))).toBe(WEIGHTS);
    const { bindings } = (await call(master, 'GET', `/router/v1/console/assets/bindings?sha256=${WEIGHTS}`)).body;
    expect(bindings[0]).toMatchObject({
      id: r.body.bindingId,
      reference: 'weights/tiny.gguf',
      sha256: WEIGHTS,
      fromNode: 'gpu-a',
      path,
      result: 'bound',
    });
    const inv = await eventually(
      async () =>
        (await call(master, 'GET', '/router/v1/console/assets/inventory')).body.entries.find(
          (e: { sha256: string }) => e.sha256 === WEIGHTS,
        ),
      { what: 'fetched file indexed' },
    );
    expect(inv).toMatchObject({ root: 'shared', path: 'tiny.gguf' });
    // A slave's relationship is its master: slave B fetches the same file from the master by the master's node id.
    const fromMaster = await fetchAsset(slaveB, { nodeId: 'master', sha256: WEIGHTS });
    expect(fromMaster.body).toMatchObject({
      result: 'bound',
      downloaded: weights.length,
      relPath: `${WEIGHTS.slice(0, 16)}.bin`,
    });
  });

  it('sources outside the configured relationship → 403; an oversize transfer → 413, nothing left behind', async () => {
    const outside = await fetchAsset(master, { url: 'http://127.0.0.1:1', sha256: WEIGHTS, name: 'x.gguf' });
    expect([outside.status, outside.body.error.code]).toEqual([403, 'source_not_configured']);
    const unknown = await fetchAsset(master, { nodeId: 'gpu-z', sha256: WEIGHTS });
    expect([unknown.status, unknown.body.error.code]).toEqual([403, 'source_not_configured']);
    // Slave A is related to its master only, not to slave B.
    const sideways = await fetchAsset(slaveA, { url: slaveB.url, sha256: WEIGHTS });
    expect(sideways.status).toBe(403);
    const tooBig = await fetchAsset(master, { nodeId: 'gpu-a', sha256: BIG, name: 'big.bin' });
    expect([tooBig.status, tooBig.body.error.code]).toEqual([413, 'asset_too_large']);
    const announced = await fetchAsset(master, {
      nodeId: 'gpu-a',
      sha256: BIG,
      name: 'big.bin',
      expectedSize: big.length,
    });
    expect(announced.status).toBe(413);
    expect(readdirSync(join(dirs.master, 'shared'))).toEqual(['tiny.gguf']);
    const rejected = (await call(master, 'GET', '/router/v1/console/assets/bindings?result=rejected')).body.bindings;
    expect(rejected.map((b: { reason: string }) => b.reason.split(':')[0])).toEqual([
      'asset_too_large',
      'asset_too_large',
      'source_not_configured',
      'source_not_configured',
    ]);
    expect(existsSync(join(dirs.master, 'shared', 'big.bin'))).toBe(false);
  });

  describe('a split recipe: text on slave A, transcription on slave B (ASSET-4)', () => {
    const recipe = {
      components: [
        { role: 'text', nodeId: 'gpu-a', model: 'chatty', backend: 'sim' },
        { role: 'transcription', nodeId: 'gpu-b', model: 'ears', backend: 'sim' },
      ],
    };

    it('PUT checks the components against the cluster: a missing node or model → 400 listing every problem', async () => {
      const bad = await call(master, 'PUT', '/router/v1/site/recipes/duo', {
        body: {
          components: [
            { ...recipe.components[0], nodeId: 'gpu-z' },
            { ...recipe.components[1], model: 'nope' },
          ],
        },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_recipe');
      expect(bad.body.error.problems).toEqual([
        { path: 'components.0.nodeId', message: "no node 'gpu-z' in this cluster" },
        { path: 'components.1.model', message: "node 'gpu-b' has no model 'nope'" },
      ]);
      expect(bad.body.error.message).toMatch(/gpu-z.*nope/);
      const onSlave = await call(slaveA, 'PUT', '/router/v1/site/recipes/duo', { body: recipe });
      expect(onSlave.status).toBe(409);
      const put = await call(master, 'PUT', '/router/v1/site/recipes/duo', { body: recipe });
      expect(put.status).toBe(201);
      expect(put.body).toMatchObject({ name: 'duo', components: recipe.components });
      expect(
        (await call(master, 'PUT', '/router/v1/site/recipes/duo', { body: { name: 'duo', ...recipe } })).status,
      ).toBe(200);
      expect(
        (await call(master, 'GET', '/router/v1/site/recipes')).body.recipes.map((r: { name: string }) => r.name),
      ).toEqual(['duo']);
      expect((await openai.models.list()).data.find((m) => m.id === 'duo')).toMatchObject({ owned_by: 'gpu-a,gpu-b' });
      const tags = (await call(master, 'GET', '/api/tags')).body.models;
      expect(tags.find((m: { name: string }) => m.name === 'duo').details).toMatchObject({
        format: 'recipe',
        family: 'sim',
      });
    });

    it('explicit loading prepares both components on their nodes', async () => {
      expect((await lanes(slaveA)).some((l) => l.loaded)).toBe(false);
      const r = await call(master, 'POST', '/router/v1/site/recipes/duo/load');
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ recipe: 'duo', ok: true });
      expect(
        r.body.components.map((c: { nodeId: string; model: string; status: string }) => [c.nodeId, c.model, c.status]),
      ).toEqual([
        ['gpu-a', 'chatty', 'loaded'],
        ['gpu-b', 'ears', 'loaded'],
      ]);
      expect((await lanes(slaveA)).find((l) => l.lane === 'text')).toMatchObject({ loaded: 'chatty', state: 'ready' });
      expect((await lanes(slaveB)).find((l) => l.lane === 'whisper')).toMatchObject({ loaded: 'ears', state: 'ready' });
      const unknown = await node(() => slaveA, 'POST', '/router/v1/node/load', { body: { localId: 'nope' } });
      expect(unknown.status).toBe(404);
    });

    it('requests named by the recipe go to the node owning the component; the public ID stays the recipe name', async () => {
      const chat = await openai.chat.completions.create({
        model: 'duo',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 4,
      });
      expect(chat.model).toBe('duo');
      expect(chat.choices[0].message.content?.length).toBeGreaterThan(0);
      const stream = await openai.chat.completions.create({
        model: 'duo',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 4,
        stream: true,
      });
      const seen = new Set<string>();
      for await (const c of stream) seen.add(c.model);
      expect([...seen]).toEqual(['duo']);
      const text = await openai.audio.transcriptions.create({
        model: 'duo',
        file: await toFile(wavFile(0.5), 'a.wav'),
      });
      expect(text.text.length).toBeGreaterThan(0);
      const rows = await eventually(
        () => {
          const db = new Database(join(dirs.master, 'store', 'router.db'), { readonly: true });
          try {
            const r = db
              .prepare("SELECT endpoint, node_id, local_id FROM request_analytics WHERE model = 'duo' ORDER BY id")
              .all() as { endpoint: string; node_id: string; local_id: string }[];
            return r.length === 3 && r;
          } finally {
            db.close();
          }
        },
        { what: 'analytics rows' },
      );
      expect(rows).toEqual([
        { endpoint: 'chat', node_id: 'gpu-a', local_id: 'chatty' },
        { endpoint: 'chat', node_id: 'gpu-a', local_id: 'chatty' },
        { endpoint: 'transcription', node_id: 'gpu-b', local_id: 'ears' },
      ]);
      // No image component: 400 naming what the recipe has.
      const image = await fetch(`${master.url}/v1/images/generations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'duo', prompt: 'x' }),
      });
      expect(image.status).toBe(400);
      expect(((await image.json()) as { error: { code: string } }).error.code).toBe('recipe_component_missing');
    });

    it('a deleted recipe is no longer routed', async () => {
      expect((await call(master, 'DELETE', '/router/v1/site/recipes/duo')).status).toBe(204);
      expect((await call(master, 'DELETE', '/router/v1/site/recipes/duo')).status).toBe(404);
      const res = await fetch(`${master.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'duo', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(res.status).toBe(404);
    });
  });
});

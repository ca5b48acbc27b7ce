import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freePort } from '../../src-router/backends';
import type { ModelConfigInput, NodeConfigInput } from '../../src-router/config';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode, tempDir } from '../support/node-harness';

// Issue #9 on real processes: a master and a slave whose models.shared_dir holds their models config folder and
// their store as subfolders (the layout that let a fetch write a `*.yaml` the next start runs, and the inventory
// serve model configs with their `env`). Config folders and the store are never an asset source or target.
const TOKEN = 'config-guard-cluster-token-0123456789';
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const WEIGHTS = Buffer.from('weights that may travel between nodes');
const EVIL = 'name: evil\nbackend: sim\ncapabilities: [text]\ncommand: touch /tmp/routerdesk-pwned\n';

interface Reply<T = any> {
  status: number;
  body: T;
  text: string;
}
async function call<T = any>(
  node: TestNode,
  method: string,
  path: string,
  opts: { body?: unknown; token?: string } = {},
): Promise<Reply<T>> {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${opts.token ?? TEST_CONSOLE_TOKEN}`,
      ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
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
  return { status: res.status, body: body as T, text };
}

describe('config folders are never an asset source or target (issue #9)', () => {
  let master: TestNode;
  let slave: TestNode;
  const dirs = { master: tempDir(), slave: tempDir() };
  const area = (d: string) => join(d, 'area'); // models.shared_dir
  const configDir = (d: string) => join(area(d), 'models'); // models.config_dir, inside the shared folder
  const sim = (name: string): ModelConfigInput => ({
    name,
    backend: 'sim',
    capabilities: ['text'],
    env: { API_SECRET: `secret-of-${name}` },
    sim: { load_time: '50ms', token_time: '1ms' },
  });
  const layout = (d: string, models: Record<string, ModelConfigInput>) => {
    mkdirSync(join(area(d), 'weights'), { recursive: true });
    mkdirSync(configDir(d), { recursive: true });
    for (const [file, cfg] of Object.entries(models)) writeFileSync(join(configDir(d), `${file}.yaml`), stringify(cfg));
    return { config_dir: configDir(d), shared_dir: area(d) };
  };
  const onNode = (n: TestNode, path: string) => call(n, 'GET', path, { token: TOKEN });

  beforeAll(async () => {
    const [pm, ps] = [await freePort(), await freePort()];
    const url = (p: number) => `http://127.0.0.1:${p}`;
    const slaveModels = layout(dirs.slave, { chatty: sim('chatty') });
    writeFileSync(join(area(dirs.slave), 'weights', 'w.gguf'), WEIGHTS);
    writeFileSync(join(area(dirs.slave), 'weights', 'evil.yaml'), EVIL); // an asset that happens to be a model config
    symlinkSync(configDir(dirs.slave), join(area(dirs.slave), 'cfg-link')); // a symlink into the config folder
    symlinkSync(join(configDir(dirs.slave), 'chatty.yaml'), join(area(dirs.slave), 'leak.yaml'));
    slave = await startNode({
      dir: dirs.slave,
      models: {},
      config: {
        server: { port: ps },
        cluster: {
          role: 'slave',
          node_id: 'gpu-a',
          token: TOKEN,
          master_url: url(pm),
          public_url: url(ps),
          sync_interval: '500ms',
          store_dir: join(area(dirs.slave), 'store'),
        },
        models: slaveModels,
      } satisfies NodeConfigInput,
    });
    master = await startNode({
      dir: dirs.master,
      models: {},
      config: {
        server: { port: pm },
        cluster: {
          role: 'master',
          node_id: 'master',
          token: TOKEN,
          slave_urls: [url(ps)],
          health_interval: '500ms',
          store_dir: join(area(dirs.master), 'store'),
        },
        models: layout(dirs.master, {}),
      },
    });
    await eventually(
      async () =>
        (await master.console<{ nodes: { healthy: boolean }[] }>('/router/v1/console/cluster/nodes')).nodes.every(
          (n) => n.healthy,
        ),
      { what: 'cluster healthy' },
    );
  });
  afterAll(async () => {
    await Promise.all([master?.stop(), slave?.stop()]);
  });

  it('a peer’s inventory lists the shared weights only: no model config, no env, no store, no symlink into them', async () => {
    const inv = await eventually(
      async () => {
        const r = await onNode(slave, '/router/v1/node/assets/inventory');
        return r.body.entries?.length && r.body.entries.every((e: { sha256: string | null }) => e.sha256) && r;
      },
      { what: 'inventory hashed' },
    );
    expect(inv.body.roots).toEqual(['shared']);
    expect(inv.body.entries.map((e: { root: string; path: string }) => `${e.root}:${e.path}`)).toEqual([
      'shared:weights/evil.yaml',
      'shared:weights/w.gguf',
    ]);
    expect(inv.text).not.toMatch(/secret-of-chatty|chatty\.yaml|router\.db|leak\.yaml/);
    // The slave's model still runs from that config: protection is for assets, not for the node's own use.
    expect(
      (await slave.console<{ models: { localId: string }[] }>('/router/v1/console/models')).models.map(
        (m) => m.localId,
      ),
    ).toEqual(['chatty']);
  });

  it('asking for the config folder or the store, however the path is spelt, is a 403 naming why, and is logged', async () => {
    for (const q of [
      'root=models',
      'root=models&path=weights',
      'root=shared&path=models',
      'root=shared&path=cfg-link',
      'root=shared&path=store',
      `root=shared&path=${encodeURIComponent(configDir(dirs.slave))}`,
    ]) {
      const r = await onNode(slave, `/router/v1/node/assets/inventory?${q}`);
      expect([r.status, r.body.error?.code], q).toEqual([403, 'protected_folder']);
      expect(r.body.error.message, q).toMatch(
        /is in the (models config folder \(models\.config_dir\)|store \(cluster\.store_dir\)): config folders and the store are never an asset source or target/,
      );
      if (!q.includes('%2F')) expect(r.text, q).not.toContain(dirs.slave); // no local paths to peers (beyond the one asked for)
    }
    const dotdot = await onNode(
      slave,
      `/router/v1/node/assets/inventory?root=shared&path=${encodeURIComponent('weights/../models')}`,
    );
    expect([dotdot.status, dotdot.body.error.code]).toEqual([403, 'path_outside_root']);
    // By hash: a config's bytes are not in any root (404), whatever the peer knows about them.
    const { readFileSync } = await import('node:fs');
    const configHash = sha256(readFileSync(join(configDir(dirs.slave), 'chatty.yaml')));
    const byHash = await onNode(slave, `/router/v1/node/assets/by-hash/${configHash}`);
    expect(byHash.status).toBe(404);
    expect(byHash.text).not.toContain('secret-of-chatty');
    await eventually(
      () => /protected_folder/.test(slave.output()) && /is in the models config folder/.test(slave.output()),
      { what: 'refusals logged' },
    );
  });

  it('a fetch can never write into the config folder: the models root is refused (403), recorded, nothing written', async () => {
    const before = readdirSync(configDir(dirs.master)).sort();
    const evil = sha256(EVIL);
    const intoModels = await call(master, 'POST', '/router/v1/console/assets/fetch', {
      body: { nodeId: 'gpu-a', sha256: evil, name: 'evil.yaml', root: 'models' },
    });
    expect([intoModels.status, intoModels.body.error?.code]).toEqual([403, 'protected_folder']);
    expect(intoModels.body.error.message).toMatch(
      /file root 'models' is in the models config folder \(models\.config_dir\).*models\.shared_dir/,
    );
    // A path hint cannot steer it there either: only the last segment of a name is used, into the shared root's top.
    const hinted = await call(master, 'POST', '/router/v1/console/assets/fetch', {
      body: { nodeId: 'gpu-a', sha256: evil, name: 'models/evil.yaml' },
    });
    expect(hinted.status).toBe(200);
    expect(hinted.body).toMatchObject({ result: 'bound', root: 'shared', relPath: 'evil.yaml' });
    expect(readdirSync(configDir(dirs.master)).sort()).toEqual(before);
    expect(existsSync(join(configDir(dirs.master), 'evil.yaml'))).toBe(false);
    const rejected = (await call(master, 'GET', `/router/v1/console/assets/bindings?sha256=${evil}&result=rejected`))
      .body.bindings;
    expect(rejected.map((b: { reason: string }) => b.reason.split(':')[0])).toEqual(['protected_folder']);
    await eventually(() => /file root 'models' is in the models config folder/.test(master.output()), {
      what: 'refusal logged on the master',
    });
    // Ordinary weights still travel into the shared folder.
    const ok = await call(master, 'POST', '/router/v1/console/assets/fetch', {
      body: { nodeId: 'gpu-a', sha256: sha256(WEIGHTS), name: 'w.gguf', expectedSize: WEIGHTS.length },
    });
    expect(ok.body).toMatchObject({ result: 'bound', root: 'shared', relPath: 'w.gguf', downloaded: WEIGHTS.length });
  });
});

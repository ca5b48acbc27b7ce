import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify } from 'yaml';
import {
  type ModelConfigList,
  modelConfigListSchema,
  modelConfigRemovedSchema,
  modelConfigWrittenSchema,
} from '../../src-router/contract';
import { simText } from '../support/lending-cluster';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';

// The models folder's console API on a running node: configs created, replaced and removed through it or by hand in
// the folder are taken in without a restart; a bad body is refused at its field and nothing is written; a file that
// turns invalid on disk keeps its last good config in force; a delete waits for the model's running request.

const OPERATOR = 'model-configs-operator-token-0123456789';
const REMOTE_VIEWER = 'model-configs-proxy-console-token-0123';
const PROXY_OPERATOR = 'model-configs-proxy-operator-token-0123';

interface Answer {
  status: number;
  body: any;
}

async function call(
  url: string,
  path: string,
  token: string | null,
  init: { method?: string; body?: unknown; rawBody?: string } = {},
): Promise<Answer> {
  const res = await fetch(`${url}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(init.body !== undefined || init.rawBody !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: init.rawBody ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body };
}

/** A request with its path sent exactly as written (fetch would resolve `%2e%2e` segments itself). */
function rawCall(url: string, path: string, method: string, token: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(
      {
        hostname,
        port,
        path,
        method,
        headers: { authorization: `Bearer ${token}`, ...(data ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const chat = (url: string, model: string, maxTokens = 4) =>
  call(url, '/v1/chat/completions', null, {
    method: 'POST',
    body: { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: maxTokens },
  });

describe('issue #28 items 1 and 2: model configs through the console API, taken in without a restart', () => {
  let node: TestNode;
  let proxy: TestNode;
  let modelsDir = '';
  const api = (
    path = '',
    init: { method?: string; body?: unknown; rawBody?: string } = {},
    token: string | null = OPERATOR,
  ) => call(node.url, `/router/v1/console/model-configs${path}`, token, init);
  const list = async () => modelConfigListSchema.parse((await api()).body) as ModelConfigList;
  const entry = async (name: string) => (await list()).configs.find((c) => c.name === name);
  const files = () => readdirSync(modelsDir).sort();
  const servedIds = async () =>
    ((await call(node.url, '/v1/models', null)).body as { data: { id: string }[] }).data.map((m) => m.id);

  beforeAll(async () => {
    [node, proxy] = await Promise.all([
      startNode({ models: { base: simText('base-model', '2ms') }, config: { console: { operators: [OPERATOR] } } }),
      startNode({
        models: {},
        config: { cluster: { node_id: 'proxy-node' }, console: { token: REMOTE_VIEWER, operators: [PROXY_OPERATOR] } },
      }),
    ]);
    modelsDir = join(node.dir, 'models');
  });
  afterAll(async () => {
    await Promise.all([node?.stop(), proxy?.stop()]);
  });

  it('lists the configs of the models folder with the config in force', async () => {
    const l = await list();
    expect(l.config_dir).toBe(modelsDir);
    expect(l.configs).toEqual([
      expect.objectContaining({
        name: 'base-model',
        file: join(modelsDir, 'base.yaml'),
        error: null,
        config: expect.objectContaining({ name: 'base-model', backend: 'sim' }),
        in_force: expect.objectContaining({ name: 'base-model', contextsize: 4096 }),
      }),
    ]);
  });

  it('is for operators only: no token, a wrong one or a non-operator console token is refused', async () => {
    expect((await api('', {}, null)).status).toBe(401);
    expect((await api('', {}, 'wrong-token-0123456789012345')).status).toBe(401);
    const viewer = await api('', { method: 'POST', body: { config: simText('sneaky', '2ms') } }, TEST_CONSOLE_TOKEN);
    expect(viewer.status).toBe(403);
    expect(viewer.body.error.code).toBe('not_an_operator');
    expect((await api('', {}, TEST_CONSOLE_TOKEN)).status).toBe(403);
    expect(files()).toEqual(['base.yaml']);
  });

  it("a non-operator cannot write an engine command (llama-server running /bin/sh -c …): POST, PUT, DELETE and the proxy's local path are refused, nothing is written or run", async () => {
    const marker = join(node.dir, 'pwned');
    const shell = {
      name: 'shell-model',
      backend: 'llama-server',
      model: join(modelsDir, 'base.yaml'),
      command: `/bin/sh -c "touch ${marker}" \${PORT}`,
    };
    const tries = [
      await api('', { method: 'POST', body: { config: shell } }, TEST_CONSOLE_TOKEN),
      await api('/base', { method: 'PUT', body: { config: { ...shell, name: 'base-model' } } }, TEST_CONSOLE_TOKEN),
      await api('/base', { method: 'DELETE' }, TEST_CONSOLE_TOKEN),
      await call(node.url, '/router/v1/console/clusters/local/console/model-configs', TEST_CONSOLE_TOKEN, {
        method: 'POST',
        body: { config: shell },
      }),
      await call(node.url, '/router/v1/console/clusters/local/console/model-configs/base', TEST_CONSOLE_TOKEN, {
        method: 'PUT',
        body: { config: { ...shell, name: 'base-model' } },
      }),
    ];
    for (const t of tries) {
      expect(t.status, JSON.stringify(t.body)).toBe(403);
      expect(t.body.error.code).toBe('not_an_operator');
    }
    expect(files()).toEqual(['base.yaml']);
    expect(parseYaml(readFileSync(join(modelsDir, 'base.yaml'), 'utf8'))).toMatchObject({
      name: 'base-model',
      backend: 'sim',
    });
    expect(existsSync(marker)).toBe(false);
  });

  it('creates a config that serves requests at once, without a restart', async () => {
    const res = await api('', { method: 'POST', body: { config: simText('added:model-v1', '2ms') } });
    expect(res.status).toBe(201);
    const written = modelConfigWrittenSchema.parse(res.body);
    expect(written).toEqual({
      name: 'added:model-v1',
      file: join(modelsDir, 'added-model-v1.yaml'),
      config: simText('added:model-v1', '2ms'),
    });
    expect(parseYaml(readFileSync(written.file, 'utf8'))).toEqual(simText('added:model-v1', '2ms'));
    expect(await servedIds()).toContain('added:model-v1');
    const answer = await chat(node.url, 'added:model-v1');
    expect(answer.status).toBe(200);
    expect(answer.body.model).toBe('added:model-v1');
    expect(files().filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('refuses a bad field with its path and writes nothing', async () => {
    const before = files();
    const bad = await api('', { method: 'POST', body: { config: { ...simText('bad-one', '2ms'), contextsize: -4 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({
      type: 'invalid_request_error',
      param: 'config.contextsize',
      code: 'invalid_config',
    });
    expect(bad.body.error.message).toMatch(/^config\.contextsize: /);
    const nested = await api('', {
      method: 'POST',
      body: { config: { ...simText('bad-two', '2ms'), sim: { load_time: 'soon' } } },
    });
    expect(nested.body.error.param).toBe('config.sim.load_time');
    const unknown = await api('', {
      method: 'POST',
      body: { config: { ...simText('bad-three', '2ms'), contextsise: 10 } },
    });
    expect(unknown.body.error.param).toBe('config.(root)');
    const weights = await api('', {
      method: 'POST',
      body: { config: { ...simText('bad-four', '2ms'), model: join(modelsDir, 'missing.gguf') } },
    });
    expect(weights.status).toBe(400);
    expect(weights.body.error).toMatchObject({ param: 'config.model', code: 'model_not_readable' });
    const shape = await api('', { method: 'POST', body: { settings: {} } });
    expect(shape.status).toBe(400);
    for (const name of ['../evil', 'a/b', 'x\u0000y', '..']) {
      const r = await api('', { method: 'POST', body: { config: simText(name, '2ms') } });
      expect(r.status, name).toBe(400);
      expect(r.body.error.param, name).toBe('config.name');
    }
    expect(files()).toEqual(before);
    expect(await servedIds()).not.toContain('bad-one');
  });

  it('refuses a second config of a model name or file that exists (409)', async () => {
    const res = await api('', { method: 'POST', body: { config: simText('base-model', '2ms') } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('model_config_exists');
  });

  it('replaces a config: the model keeps its public ID, its new settings in force, requests still served', async () => {
    const before = (
      await node.console<{ models: { id: string; configHash: string }[] }>('/router/v1/console/cluster/models')
    ).models.find((m) => m.id === 'base-model')!;
    const res = await api('/base-model', {
      method: 'PUT',
      body: { config: { ...simText('base-model', '2ms'), contextsize: 8192 } },
    });
    expect(res.status).toBe(200);
    expect(modelConfigWrittenSchema.parse(res.body)).toMatchObject({
      name: 'base-model',
      file: join(modelsDir, 'base.yaml'),
    });
    const after = (
      await node.console<{ models: { id: string; configHash: string }[] }>('/router/v1/console/cluster/models')
    ).models.filter((m) => m.id.startsWith('base-model'));
    expect(after.map((m) => m.id)).toEqual(['base-model']);
    expect(after[0].configHash).not.toBe(before.configHash);
    const models = await node.console<{ models: { publicId: string; contextsize: number }[] }>(
      '/router/v1/console/models',
    );
    expect(models.models.find((m) => m.publicId === 'base-model')!.contextsize).toBe(8192);
    expect((await entry('base-model'))!.in_force).toMatchObject({ contextsize: 8192 });
    expect((await chat(node.url, 'base-model')).status).toBe(200);
    expect(
      (await api('/no-such-model', { method: 'PUT', body: { config: simText('no-such-model', '2ms') } })).status,
    ).toBe(404);
    // A rename is allowed only to a free name.
    const clash = await api('/base', { method: 'PUT', body: { config: simText('added:model-v1', '2ms') } });
    expect(clash.status).toBe(409);
  });

  it('switches a loaded engine to a changed config once its lane is idle', async () => {
    expect((await chat(node.url, 'base-model')).status).toBe(200);
    const pidOf = async () =>
      (
        await node.console<{ lanes: { loaded: string | null; pid: number | null; state: string }[] }>(
          '/router/v1/console/lanes',
        )
      ).lanes.find((l) => l.loaded === 'base');
    const first = (await pidOf())!;
    expect(first.state).toBe('ready');
    expect(
      (await api('/base', { method: 'PUT', body: { config: { ...simText('base-model', '2ms'), contextsize: 2048 } } }))
        .status,
    ).toBe(200);
    await eventually(
      async () => {
        const now = await pidOf();
        return now && now.state === 'ready' && now.pid !== first.pid;
      },
      { what: 'the engine restarted with the new config' },
    );
    expect((await chat(node.url, 'base-model')).status).toBe(200);
  });

  it('a config changed while a request runs: the request finishes on the old engine, then the engine is switched', async () => {
    expect((await api('', { method: 'POST', body: { config: simText('steady-model', '100ms') } })).status).toBe(201);
    const laneOf = async () =>
      (
        await node.console<{ lanes: { loaded: string | null; pid: number | null; state: string; inflight: number }[] }>(
          '/router/v1/console/lanes',
        )
      ).lanes.find((l) => l.loaded === 'steady-model');
    expect((await chat(node.url, 'steady-model', 1)).status).toBe(200);
    const before = (await laneOf())!;
    const running = chat(node.url, 'steady-model', 12);
    await eventually(async () => ((await laneOf())?.inflight ?? 0) > 0, { what: 'the request running' });
    expect(
      (
        await api('/steady-model', {
          method: 'PUT',
          body: { config: { ...simText('steady-model', '100ms'), contextsize: 1024 } },
        })
      ).status,
    ).toBe(200);
    const done = await running;
    expect(done.status).toBe(200);
    expect(done.body.usage.completion_tokens).toBe(12);
    await eventually(
      async () => {
        const now = await laneOf();
        return now && now.state === 'ready' && now.pid !== before.pid;
      },
      { what: 'the engine switched to the new config' },
    );
    expect((await api('/steady-model', { method: 'DELETE' })).status).toBe(200);
  });

  it('picks up a file written by hand', async () => {
    writeFileSync(join(modelsDir, 'by-hand.yaml'), stringify(simText('hand-model', '2ms')));
    await eventually(async () => (await servedIds()).includes('hand-model'), { what: 'the hand-written model served' });
    expect((await chat(node.url, 'hand-model')).status).toBe(200);
  });

  it('keeps the last good config of a file that turns invalid, and shows its error at its field', async () => {
    writeFileSync(join(modelsDir, 'by-hand.yaml'), stringify({ ...simText('hand-model', '2ms'), contextsize: 'big' }));
    const bad = await eventually(
      async () => {
        const e = await entry('hand-model');
        return e?.error ? e : null;
      },
      { what: 'the error shown' },
    );
    expect(bad.error!.path).toBe('contextsize');
    expect(bad.config).toMatchObject({ contextsize: 'big' });
    expect(bad.in_force).toMatchObject({ name: 'hand-model', contextsize: 4096 });
    expect((await chat(node.url, 'hand-model')).status).toBe(200);
    // Half-written: the YAML does not parse yet.
    writeFileSync(join(modelsDir, 'by-hand.yaml'), 'name: hand-model\nbackend: [sim\n');
    const half = await eventually(
      async () => {
        const e = (await list()).configs.find((c) => c.file.endsWith('by-hand.yaml'));
        return e?.error?.path === '(yaml)' ? e : null;
      },
      { what: 'the YAML error shown' },
    );
    expect(half.name).toBe('by-hand');
    expect(half.in_force).toMatchObject({ name: 'hand-model' });
    expect((await chat(node.url, 'hand-model')).status).toBe(200);
    // Fixed again: taken in.
    writeFileSync(join(modelsDir, 'by-hand.yaml'), stringify({ ...simText('hand-model', '2ms'), contextsize: 1024 }));
    await eventually(async () => (await entry('hand-model'))?.in_force?.contextsize === 1024, {
      what: 'the fixed file taken in',
    });
  });

  it('refuses a YAML bomb on disk without blowing up, and stays responsive', async () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 12; i++)
      lines.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );
    writeFileSync(join(modelsDir, 'bomb.yaml'), `${lines.join('\n')}\nname: bomb\nbackend: sim\n`);
    const e = await eventually(
      async () => (await list()).configs.find((c) => c.file.endsWith('bomb.yaml') && c.error),
      { what: 'the bomb refused' },
    );
    expect(e.error!.path).toBe('(yaml)');
    expect(e.in_force).toBeNull();
    expect((await chat(node.url, 'base-model')).status).toBe(200);
    // A second file of one stem would share its local ID: refused, the first stays in force.
    writeFileSync(join(modelsDir, 'base.yml'), stringify(simText('other-base', '2ms')));
    const twin = await eventually(
      async () => (await list()).configs.find((c) => c.file.endsWith('base.yml') && c.error),
      { what: 'the twin refused' },
    );
    expect(twin.error!.path).toBe('(file)');
    expect(twin.in_force).toBeNull();
    expect((await list()).configs.find((c) => c.file.endsWith('base.yaml'))!.in_force).toMatchObject({
      name: 'base-model',
    });
    expect(await servedIds()).not.toContain('other-base');
    rmSync(join(modelsDir, 'base.yml'));
  });

  it('refuses a huge body unread, and path tricks in :name find nothing', async () => {
    const huge = await api('', {
      method: 'POST',
      rawBody: JSON.stringify({ config: { ...simText('huge', '2ms'), env: { X: 'y'.repeat(200_000) } } }),
    });
    expect(huge.status).toBe(413);
    const nodeYaml = readFileSync(join(node.dir, 'node.yaml'), 'utf8');
    for (const name of [
      '%2e%2e%2fnode',
      '..%2Fnode',
      '%2E%2E',
      '..%2f..%2fetc%2fpasswd',
      'base%00',
      '%2fetc%2fpasswd',
    ]) {
      const put = await rawCall(node.url, `/router/v1/console/model-configs/${name}`, 'PUT', OPERATOR, {
        config: simText('x', '2ms'),
      });
      expect([404, 400], name).toContain(put.status);
      const del = await rawCall(node.url, `/router/v1/console/model-configs/${name}`, 'DELETE', OPERATOR);
      expect([404, 400], name).toContain(del.status);
    }
    expect(readFileSync(join(node.dir, 'node.yaml'), 'utf8')).toBe(nodeYaml);
    expect(existsSync(join(modelsDir, 'base.yaml'))).toBe(true);
  });

  it('serializes concurrent replacements: each answered, the file whole and one of them', async () => {
    const sizes = [1000, 2000, 3000, 4000, 5000, 6000];
    const answers = await Promise.all(
      sizes.map((contextsize) =>
        api('/added-model-v1', {
          method: 'PUT',
          body: { config: { ...simText('added:model-v1', '2ms'), contextsize } },
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(sizes.map(() => 200));
    const onDisk = parseYaml(readFileSync(join(modelsDir, 'added-model-v1.yaml'), 'utf8')) as { contextsize: number };
    expect(sizes).toContain(onDisk.contextsize);
    await eventually(async () => (await entry('added:model-v1'))?.in_force?.contextsize === onDisk.contextsize, {
      what: 'the last write in force',
    });
    expect(files().filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('reaches the node through the remote-cluster proxy, for operators there only', async () => {
    const made = await call(proxy.url, '/router/v1/console/clusters', PROXY_OPERATOR, {
      method: 'POST',
      body: { name: 'models-node', url: node.url, token: OPERATOR },
    });
    expect(made.status).toBe(201);
    const id = made.body.id as string;
    const path = `/router/v1/console/clusters/${id}/console/model-configs`;
    // The profile's token is an operator's on the node: a read-only console token at the proxy may not use it here.
    expect((await call(proxy.url, path, REMOTE_VIEWER)).status).toBe(403);
    expect(
      (
        await call(proxy.url, path, REMOTE_VIEWER, {
          method: 'POST',
          body: { config: simText('proxied-model', '2ms') },
        })
      ).status,
    ).toBe(403);
    const viaProxy = await call(proxy.url, path, PROXY_OPERATOR);
    expect(viaProxy.status).toBe(200);
    expect(modelConfigListSchema.parse(viaProxy.body).configs.map((c) => c.name)).toContain('base-model');
    const created = await call(proxy.url, path, PROXY_OPERATOR, {
      method: 'POST',
      body: { config: simText('proxied-model', '2ms') },
    });
    expect(created.status).toBe(201);
    expect((await chat(node.url, 'proxied-model')).status).toBe(200);
    const bad = await call(proxy.url, path, PROXY_OPERATOR, {
      method: 'POST',
      body: { config: { ...simText('proxied-bad', '2ms'), parallel: 0 } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('config.parallel');
    const removed = await call(proxy.url, `${path}/proxied-model`, PROXY_OPERATOR, { method: 'DELETE' });
    expect(removed.status).toBe(200);
    expect((await chat(node.url, 'proxied-model')).status).toBe(404);
  });

  it('deletes a model while a request runs: the request finishes, the next is refused, then its engine is gone', async () => {
    expect((await api('', { method: 'POST', body: { config: simText('slow-model', '150ms') } })).status).toBe(201);
    const running = chat(node.url, 'slow-model', 12);
    await eventually(
      async () =>
        (
          await node.console<{ lanes: { loaded: string | null; inflight: number }[] }>('/router/v1/console/lanes')
        ).lanes.some((l) => l.loaded === 'slow-model' && l.inflight > 0),
      { what: 'the request running' },
    );
    const removal = api('/slow-model', { method: 'DELETE' });
    await eventually(async () => !(await servedIds()).includes('slow-model'), { what: 'the model unlisted' });
    const refused = await chat(node.url, 'slow-model');
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('model_not_found');
    const ollama = await call(node.url, '/api/chat', null, {
      method: 'POST',
      body: { model: 'slow-model', messages: [{ role: 'user', content: 'hi' }], stream: false },
    });
    expect(ollama.status).toBe(404);
    expect(typeof ollama.body.error).toBe('string');
    const done = await running;
    expect(done.status).toBe(200);
    expect(done.body.choices[0].message.content.length).toBeGreaterThan(0);
    const removed = await removal;
    expect(removed.status).toBe(200);
    expect(modelConfigRemovedSchema.parse(removed.body)).toEqual({ name: 'slow-model', removed: true });
    const lanes = await node.console<{ lanes: { loaded: string | null }[] }>('/router/v1/console/lanes');
    expect(lanes.lanes.some((l) => l.loaded === 'slow-model')).toBe(false);
    expect(existsSync(join(modelsDir, 'slow-model.yaml'))).toBe(false);
    expect((await api('/slow-model', { method: 'DELETE' })).status).toBe(404);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type ModelConfigList, modelConfigListSchema } from '../../src-router/contract';
import { simText } from '../support/lending-cluster';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';

// The models folder as an operator leaves it: symlinks (outside, a loop, to a FIFO or a device), a file replaced by a
// folder, weights deleted after the config was taken in, the folder itself deleted and made again, and a model renamed
// to another file's name. The node never hangs, shows each file's error, and the API never edits the wrong file.

describe('issue #28: the models folder as operators leave it', () => {
  let node: TestNode;
  let models = '';
  const api = async (path: string, method: string, body?: unknown) => {
    const res = await fetch(`${node.url}/router/v1/console/model-configs${path}`, {
      method,
      headers: {
        authorization: `Bearer ${TEST_CONSOLE_TOKEN}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as { error?: { code: string; param: string } } };
  };
  const list = async () =>
    modelConfigListSchema.parse(await node.console('/router/v1/console/model-configs')) as ModelConfigList;
  const at = async (f: string) => (await list()).configs.find((c) => c.file === join(models, f));
  const served = async () =>
    ((await (await fetch(`${node.url}/v1/models`)).json()) as { data: { id: string }[] }).data.map((m) => m.id).sort();

  /** The inotify watches the node process holds (fs.watch on Linux): one per watched folder. */
  const watches = () =>
    readdirSync(`/proc/${node.proc.pid}/fdinfo`).reduce((n, fd) => {
      try {
        return n + (readFileSync(`/proc/${node.proc.pid}/fdinfo/${fd}`, 'utf8').match(/^inotify wd:/gm)?.length ?? 0);
      } catch {
        return n;
      }
    }, 0);

  beforeAll(async () => {
    node = await startNode({ models: { base: simText('base-model', '2ms') } });
    models = join(node.dir, 'models');
  });
  afterAll(async () => node?.stop());

  it('symlinks: one to a config outside is served; a loop, one to a FIFO and one to a device are refused and never hang a rescan', async () => {
    const outside = join(node.dir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'linked.yaml'), stringify(simText('linked-model', '2ms')));
    execFileSync('mkfifo', [join(outside, 'pipe')]);
    symlinkSync(join(outside, 'linked.yaml'), join(models, 'linked.yaml'));
    symlinkSync(join(models, 'loop.yaml'), join(models, 'loop.yaml'));
    symlinkSync(join(outside, 'pipe'), join(models, 'pipe.yaml'));
    symlinkSync('/dev/zero', join(models, 'zero.yaml'));
    await eventually(async () => (await served()).includes('linked-model'), { what: 'the linked config served' });
    for (const f of ['loop.yaml', 'pipe.yaml', 'zero.yaml'])
      expect(await at(f), f).toMatchObject({ error: { path: '(file)' }, in_force: null });
    expect((await fetch(`${node.url}/health`)).status).toBe(200);
    for (const f of ['linked.yaml', 'loop.yaml', 'pipe.yaml', 'zero.yaml']) rmSync(join(models, f));
    await eventually(async () => !(await served()).includes('linked-model'), { what: 'the unlinked config gone' });
  });

  it('a config file replaced by a folder keeps its last good config and shows the error', async () => {
    writeFileSync(join(models, 'swap.yaml'), stringify(simText('swap-model', '2ms')));
    await eventually(async () => (await served()).includes('swap-model'), { what: 'swap-model served' });
    rmSync(join(models, 'swap.yaml'));
    mkdirSync(join(models, 'swap.yaml'));
    await eventually(async () => (await at('swap.yaml'))?.error?.path === '(file)', { what: 'the folder refused' });
    expect(await at('swap.yaml')).toMatchObject({ in_force: expect.objectContaining({ name: 'swap-model' }) });
    rmSync(join(models, 'swap.yaml'), { recursive: true });
    await eventually(async () => !(await served()).includes('swap-model'), { what: 'swap-model gone' });
  });

  it('weights deleted after the config was taken in: the error shows at `model`, the last good config stays', async () => {
    const weights = join(node.dir, 'w.gguf');
    writeFileSync(weights, 'GGUF-ish');
    writeFileSync(join(models, 'weighted.yaml'), stringify({ ...simText('weighted-model', '2ms'), model: weights }));
    await eventually(async () => (await served()).includes('weighted-model'), { what: 'weighted-model served' });
    rmSync(weights);
    await eventually(async () => (await at('weighted.yaml'))?.error?.path === 'model', { what: 'the weights error' });
    expect(await at('weighted.yaml')).toMatchObject({
      error: { message: expect.stringMatching(/does not exist/) },
      in_force: expect.objectContaining({ name: 'weighted-model' }),
    });
    rmSync(join(models, 'weighted.yaml'));
    await eventually(async () => !(await served()).includes('weighted-model'), { what: 'weighted-model gone' });
  });

  it('a model cannot be named after another file of the folder (the API would edit that file by the name)', async () => {
    writeFileSync(join(models, 'alpha.yaml'), stringify(simText('alpha-model', '2ms')));
    writeFileSync(join(models, 'beta.yaml'), stringify(simText('beta-model', '2ms')));
    await eventually(async () => (await served()).includes('beta-model'), { what: 'beta-model served' });
    const renamed = await api('/alpha', 'PUT', { config: simText('beta', '2ms') });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(409);
    expect(renamed.body.error).toMatchObject({ code: 'model_config_exists', param: 'config.name' });
    // A new config named after a file stem whose file names another model: refused as well.
    writeFileSync(join(models, 'odd name.yaml'), stringify(simText('odd-model', '2ms')));
    const created = await api('', 'POST', { config: simText('odd name', '2ms') });
    expect(created.status, JSON.stringify(created.body)).toBe(409);
    expect(created.body.error).toMatchObject({ code: 'model_config_exists' });
    for (const f of ['alpha.yaml', 'beta.yaml', 'odd name.yaml']) rmSync(join(models, f));
    await eventually(async () => (await served()).join() === 'base-model', { what: 'only base-model' });
  });

  it('the models folder deleted and made again: its new files are taken in', async () => {
    rmSync(models, { recursive: true });
    await eventually(
      async () => {
        const res = await fetch(`${node.url}/router/v1/console/model-configs`, {
          headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
        });
        return res.status === 200;
      },
      { what: 'the console answers' },
    );
    mkdirSync(models);
    writeFileSync(join(models, 'reborn.yaml'), stringify(simText('reborn-model', '2ms')));
    await eventually(async () => (await served()).join() === 'reborn-model', {
      what: 'the new folder taken in',
      timeoutMs: 15_000,
    });
    // The new folder is watched again (a change is seen at once, not only by the periodic rescan).
    await eventually(() => watches() === 1, { what: 'the new folder watched' });
  });
});

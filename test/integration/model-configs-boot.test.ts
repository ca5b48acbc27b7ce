import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type ModelConfigList, modelConfigListSchema } from '../../src-router/contract';
import type { RuntimeBlobView } from '../../src-router/runtime';
import { simText } from '../support/lending-cluster';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode, tempDir } from '../support/node-harness';

// Start-up is tolerant of one bad model config: the file is skipped (not served), logged with its file and field
// path, listed by the console with its error, and reported by the boot self-tests as a warning; the node starts and
// serves its other models, and the file is taken in once it is fixed.

describe('issue #28: an invalid model config file on disk at start-up is skipped, the node starts', () => {
  let node: TestNode;
  let dir = '';
  const list = async () =>
    modelConfigListSchema.parse(await node.console('/router/v1/console/model-configs')) as ModelConfigList;
  const served = async () =>
    ((await (await fetch(`${node.url}/v1/models`)).json()) as { data: { id: string }[] }).data.map((m) => m.id);

  beforeAll(async () => {
    dir = tempDir();
    mkdirSync(join(dir, 'models'));
    // A field typed wrong by hand, a YAML syntax error, weights that do not exist, a FIFO named like a config.
    writeFileSync(
      join(dir, 'models', 'typo.yaml'),
      stringify({ ...simText('typo-model', '2ms'), contextsize: 'four thousand' }),
    );
    writeFileSync(join(dir, 'models', 'broken.yaml'), 'name: broken-model\nbackend: [sim\n');
    writeFileSync(
      join(dir, 'models', 'noweights.yaml'),
      stringify({ ...simText('noweights-model', '2ms'), model: join(dir, 'gone.gguf') }),
    );
    node = await startNode({
      dir,
      models: { good: simText('good-model', '2ms') },
      env: { ROUTERDESK_LOG_LEVEL: 'info' },
    });
  });
  afterAll(async () => node?.stop());

  it('serves the good model and not the bad ones', async () => {
    expect(await served()).toEqual(['good-model']);
    const res = await fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'good-model', max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
  });

  it('lists each bad file with its error at its field and no config in force', async () => {
    const { configs } = await list();
    const at = (stem: string) => configs.find((c) => c.file === join(dir, 'models', `${stem}.yaml`));
    expect(at('typo')).toMatchObject({ name: 'typo-model', error: { path: 'contextsize' }, in_force: null });
    expect(at('broken')).toMatchObject({ error: { path: '(yaml)' }, in_force: null });
    expect(at('noweights')).toMatchObject({
      name: 'noweights-model',
      error: { path: 'model', message: expect.stringMatching(/does not exist/) },
      in_force: null,
    });
    expect(at('good')).toMatchObject({ error: null, in_force: expect.objectContaining({ name: 'good-model' }) });
  });

  it('logs each bad file with its file and field path', () => {
    expect(node.output()).toMatch(
      new RegExp(`model config ${join(dir, 'models', 'typo.yaml')} refused at contextsize`),
    );
    expect(node.output()).toMatch(/broken\.yaml refused at \(yaml\)/);
    expect(node.output()).toMatch(/noweights\.yaml refused at model/);
  });

  it('reports each bad file as a boot self-test warning', async () => {
    const blob = await eventually(
      async () => {
        const h = await node.console<{ published: boolean; blob?: RuntimeBlobView }>(
          '/router/v1/console/runtime.health',
        );
        return h.published && h.blob;
      },
      { what: 'a published blob' },
    );
    const warned = blob.selfTests!.filter((t) => t.status === 'warn' && /^model config /.test(t.name ?? ''));
    expect(warned.map((t) => t.name).sort()).toEqual([
      'model config broken.yaml',
      'model config noweights.yaml',
      'model config typo.yaml',
    ]);
    expect(warned.find((t) => t.name === 'model config typo.yaml')!.detail).toMatch(
      /refused at contextsize: .*not served/,
    );
  });

  it('takes a bad file in once it is fixed, without a restart', async () => {
    writeFileSync(join(dir, 'models', 'typo.yaml'), stringify(simText('typo-model', '2ms')));
    await eventually(async () => (await served()).includes('typo-model'), { what: 'the fixed model served' });
  });
});

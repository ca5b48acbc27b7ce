import { fileURLToPath } from 'node:url';
import { expect, type Page, test } from '@playwright/test';
import type { ModelConfigInput } from '../../src-router/config';
import { guardiansViewSchema, lendingViewSchema } from '../../src-router/contract';
import { startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';
import { freePort } from './harness/router-node';

/**
 * The Guardians card of the Lending tab (UI-4, GUARD-1) against a real cluster: a master and one slave as separate
 * `routerdesk node` processes, each with a text-only and a multimodal sim model. The operator sets a cluster default
 * and a per-model guardian in the card, sees the effective guardians change, sees the node's refusal under the field
 * it named, and each node's guardian settings version in the builds table.
 */

const shot = (name: string) => fileURLToPath(new URL(`../../test-results/${name}.png`, import.meta.url));

const CLUSTER = { token: 'e2e-guardians-token-0123456789', health_interval: '400ms', sync_interval: '400ms' };
const simText = (name: string): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['text'],
  contextsize: 4096,
  parallel: 1,
  sim: { load_time: '50ms', token_time: '5ms' },
});
const simVision = (name: string): ModelConfigInput => ({ ...simText(name), capabilities: ['text', 'multimodal'] });

let master: TestNode;
let slave: TestNode;

test.describe.configure({ mode: 'serial' });

async function consoleGet(path: string): Promise<unknown> {
  const res = await fetch(`${master.url}${path}`, { headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` } });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

test.beforeAll(async () => {
  test.setTimeout(60_000);
  const [mp, sp] = [await freePort(), await freePort()];
  const [masterUrl, slaveUrl] = [`http://127.0.0.1:${mp}`, `http://127.0.0.1:${sp}`];
  [slave, master] = await Promise.all([
    startNode({
      models: { b: simText('model-b'), 'vl-b': simVision('model-vl-b') },
      config: {
        server: { port: sp },
        cluster: { role: 'slave', node_id: 'gpu-b', master_url: masterUrl, public_url: slaveUrl, ...CLUSTER },
      },
    }),
    startNode({
      models: { a: simText('model-a'), vl: simVision('model-vl') },
      config: {
        server: { port: mp },
        cluster: { role: 'master', node_id: 'master', slave_urls: [slaveUrl], ...CLUSTER },
      },
    }),
  ]);
  // Both nodes' models are in the master's catalog.
  await expect(async () => {
    expect(guardiansViewSchema.parse(await consoleGet('/router/v1/site/guardians')).effective).toHaveLength(2);
  }).toPass({ timeout: 15_000, intervals: [100] });
});

test.afterAll(async () => {
  await Promise.all([master?.stop(), slave?.stop()]);
});

async function open(page: Page) {
  await page.goto(`${master.url}/?token=${TEST_CONSOLE_TOKEN}`);
  await expect(page.getByTestId('connection-status')).toHaveText('online');
  await page.getByTestId('nav-lending').click();
  await expect(page.getByTestId('lending-page')).toBeVisible();
  await expect(page.getByTestId('guardians-card')).toBeVisible();
}

const effective = (page: Page, key: string) =>
  page.locator(`[data-testid="guardian-effective-row"][data-key="${key}"]`);

test('the Guardians card sets a cluster default and a per-model guardian, shows why, and shows the node refusing', async ({
  page,
}) => {
  await open(page);
  const card = page.getByTestId('guardians-card');
  await expect(card.getByTestId('guardian-settings-empty')).toBeVisible();
  for (const key of ['master/a', 'gpu-b/b'])
    await expect(effective(page, key).getByTestId('guardian-effective-guardian')).toHaveText(
      'none — image requests are refused',
    );
  // The picker offers only the multimodal models.
  await expect(card.getByTestId('guardian-pick').locator('option')).toHaveText([
    'choose a multimodal model…',
    'model-vl (vl on master)',
    'model-vl-b (vl-b on gpu-b)',
  ]);

  // The cluster default.
  await card.getByTestId('guardian-pick').selectOption('master/vl');
  await card.getByTestId('guardian-save').click();
  await expect(card.getByTestId('guardian-saved')).toBeVisible();
  for (const key of ['master/a', 'gpu-b/b']) {
    await expect(effective(page, key).getByTestId('guardian-effective-guardian')).toHaveText('model-vl (vl on master)');
    await expect(effective(page, key).getByTestId('guardian-effective-from')).toHaveText('cluster default');
  }

  // A per-model guardian wins over the default for that model only.
  await card.getByTestId('guardian-scope').selectOption('model');
  await card.getByTestId('guardian-target').selectOption('gpu-b/b');
  await card.getByTestId('guardian-pick').selectOption('gpu-b/vl-b');
  await card.getByTestId('guardian-save').click();
  await expect(effective(page, 'gpu-b/b').getByTestId('guardian-effective-guardian')).toHaveText(
    'model-vl-b (vl-b on gpu-b)',
  );
  await expect(effective(page, 'gpu-b/b').getByTestId('guardian-effective-from')).toHaveText('model setting');
  await expect(effective(page, 'master/a').getByTestId('guardian-effective-from')).toHaveText('cluster default');
  await expect(card.getByTestId('guardian-setting-row')).toHaveCount(2);

  // A multimodal model needs no guardian: the node refuses, and the card shows why under the model field.
  await card.getByTestId('guardian-scope').selectOption('model');
  await card.getByTestId('guardian-target').selectOption('master/vl');
  await card.getByTestId('guardian-pick').selectOption('gpu-b/vl-b');
  await card.getByTestId('guardian-save').click();
  await expect(card.getByTestId('guardian-error-model')).toContainText('is not a text-only model');
  await expect(card.getByTestId('guardian-error-guardian')).toHaveCount(0);
  await expect(card.getByTestId('guardian-setting-row')).toHaveCount(2);

  // Every node runs the master's guardian settings version: the builds table shows it on both rows.
  const { version } = guardiansViewSchema.parse(await consoleGet('/router/v1/site/guardians'));
  expect(version).toBe(2);
  await expect(async () => {
    const { nodes } = lendingViewSchema.parse(await consoleGet('/router/v1/console/lending'));
    expect(nodes.map((n) => n.guardiansVersion)).toEqual([2, 2]);
  }).toPass({ timeout: 15_000, intervals: [100] });
  await page.getByTestId('lending-refresh').click();
  await expect(page.locator('[data-testid="node-build-row"] [data-testid="node-build-guardians"]')).toHaveText([
    '2',
    '2',
  ]);
  await page.screenshot({ path: shot('lending-guardians'), fullPage: true });

  // Removing the per-model setting: the default applies to that model again.
  await card.locator('[data-testid="guardian-setting-row"][data-scope="model"]').getByTestId('guardian-remove').click();
  await expect(effective(page, 'gpu-b/b').getByTestId('guardian-effective-from')).toHaveText('cluster default');
  await expect(card.getByTestId('guardian-setting-row')).toHaveCount(1);
});

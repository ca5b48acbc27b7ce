import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';
import { type RouterNode, startRouterNode } from './harness/router-node';

/** Models page against a real router node with two sim models. */

const screenshot = fileURLToPath(new URL('../../test-results/models.png', import.meta.url));

const MODELS = [
  { localId: 'sim-chat', publicId: 'sim-chat', yaml: 'name: sim-chat\nbackend: sim\ncapabilities: [text]\n' },
  {
    localId: 'sim-image',
    publicId: 'sim-image',
    yaml: 'name: sim-image\nbackend: sim\ncapabilities: [image]\nttl: 5m\n',
  },
];

let node: RouterNode;

test.beforeAll(async () => {
  node = await startRouterNode({ nodeId: 'e2e-node', models: MODELS });
});

test.afterAll(async () => {
  await node?.stop();
});

test('lists the node and its models', async ({ page, request }) => {
  // What the node itself says, to compare the page against.
  const api = await request.get(`${node.url}/router/v1/console/models`, {
    headers: { Authorization: `Bearer ${node.consoleToken}` },
  });
  expect(api.status()).toBe(200);
  const body = (await api.json()) as { models: { publicId: string; state: string }[] };

  await page.goto(`${node.url}/?token=${node.consoleToken}`);

  await expect(page.getByTestId('node-id')).toHaveText('e2e-node');
  await expect(page.getByTestId('node-role')).toHaveText('standalone');
  await expect(page.getByTestId('connection-status')).toHaveText('online');
  await expect(page.getByTestId('model-row')).toHaveCount(MODELS.length);

  for (const m of MODELS) {
    const row = page.locator(`[data-testid="model-row"][data-model-id="${m.publicId}"]`);
    await expect(row.getByTestId('model-public-id')).toHaveText(m.publicId);
    await expect(row.getByTestId('model-local-id')).toHaveText(m.localId);
    await expect(row.getByTestId('model-backend')).toHaveText('sim');
    await expect(row.getByTestId('model-source')).toHaveText('config file');
    const state = body.models.find((x) => x.publicId === m.publicId)?.state;
    expect(state, `${m.publicId} in the API answer`).toBeDefined();
    await expect(row.getByTestId('model-state')).toHaveText(state!);
  }
  await expect(page.locator('[data-model-id="sim-image"]').getByTestId('model-capabilities')).toHaveText('image');
  // Idle unload (issue #11): the config's ttl, or none.
  await expect(page.locator('[data-model-id="sim-image"]').getByTestId('model-idle-unload')).toHaveText(
    'after 5m idle',
  );
  await expect(page.locator('[data-model-id="sim-chat"]').getByTestId('model-idle-unload')).toHaveText('never');

  // The token does not stay in the address bar (or in history).
  expect(new URL(page.url()).searchParams.has('token')).toBe(false);

  await page.screenshot({ path: screenshot, fullPage: true });
});

test('a wrong token shows the rejection', async ({ page }) => {
  await page.goto(`${node.url}/?token=not-the-console-token-x`);
  await expect(page.getByTestId('models-error')).toContainText('console token rejected');
  await expect(page.getByTestId('connection-status')).toHaveText('token rejected');
  await expect(page.getByTestId('model-row')).toHaveCount(0);
});

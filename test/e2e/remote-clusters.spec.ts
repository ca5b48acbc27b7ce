import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { expect, type Page, test } from '@playwright/test';
import type { ModelConfigInput } from '../../src-router/config';
import { clusterListSchema, routingViewSchema, runtimeHealthSchema } from '../../src-router/contract';
import { startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';
import { freePort } from './harness/router-node';

/**
 * Remote clusters (UI-5, issue #12) against two real clusters on loopback: the console is served by a local
 * standalone node; the remote is a routing-only master (no models of its own, its own console token) with one slave.
 * The remote is added through the switcher (wrong token first), every screen is read through the local node's
 * proxy, a routing strategy is written there (and only there), and the remote is stopped.
 */

const shot = (name: string) => fileURLToPath(new URL(`../../test-results/${name}.png`, import.meta.url));

const REMOTE_TOKEN = 'remote-console-token-0123456789';
const CLUSTER_TOKEN = 'e2e-remote-cluster-token-0123';
const simText = (name: string): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['text'],
  contextsize: 4096,
  parallel: 1,
  sim: { load_time: '50ms', token_time: '5ms' },
});

let local: TestNode;
let master: TestNode;
let slave: TestNode;
let clusterId = '';

test.describe.configure({ mode: 'serial' });

async function get<T>(node: TestNode, path: string, token = TEST_CONSOLE_TOKEN): Promise<T> {
  const res = await fetch(`${node.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Opens the console of the local node on `screen` with the remote selected by the address, as a reload would. */
async function openRemote(page: Page, screen: string) {
  await page.goto(`${local.url}/?token=${TEST_CONSOLE_TOKEN}&cluster=${clusterId}#${screen}`);
  await expect(page.getByTestId('cluster-current')).toHaveAttribute('data-cluster-id', clusterId);
  await expect(page.getByTestId(`${screen}-page`)).toBeVisible();
}

test.beforeAll(async () => {
  test.setTimeout(60_000);
  const [mp, sp] = [await freePort(), await freePort()];
  const [masterUrl, slaveUrl] = [`http://127.0.0.1:${mp}`, `http://127.0.0.1:${sp}`];
  const fast = { token: CLUSTER_TOKEN, health_interval: '400ms', sync_interval: '400ms' };
  [local, slave, master] = await Promise.all([
    startNode({
      models: { here: simText('local-model') },
      config: { cluster: { role: 'standalone', node_id: 'local-node' }, routing: { poll_interval: '300ms' } },
    }),
    startNode({
      models: { b: simText('model-b') },
      config: {
        server: { port: sp },
        cluster: { role: 'slave', node_id: 'gpu-b', master_url: masterUrl, public_url: slaveUrl, ...fast },
      },
    }),
    startNode({
      models: {},
      config: {
        server: { port: mp },
        cluster: { role: 'master', node_id: 'r-master', slave_urls: [slaveUrl], ...fast },
        console: { token: REMOTE_TOKEN },
        routing: { poll_interval: '300ms' },
      },
    }),
  ]);
  await expect(async () => {
    const { nodes } = await get<{ nodes: { healthy: boolean }[] }>(
      master,
      '/router/v1/console/cluster/nodes',
      REMOTE_TOKEN,
    );
    expect(nodes.map((n) => n.healthy)).toEqual([true, true]);
  }).toPass({ timeout: 15_000, intervals: [100] });
  // The slave's model loaded once, so its lane state and its runtime blob's serving config say so.
  const chat = await fetch(`${slave.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'model-b', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
  });
  expect(chat.status).toBe(200);
});

test.afterAll(async () => {
  await Promise.all([local?.stop(), master?.stop(), slave?.stop()]);
});

test('add the remote: a wrong token is refused at the token field, the right one is kept', async ({ page }) => {
  await page.goto(`${local.url}/?token=${TEST_CONSOLE_TOKEN}`);
  await expect(page.getByTestId('connection-status')).toHaveText('online');
  await expect(page.getByTestId('cluster-current-name')).toHaveText('local');
  await expect(page.getByTestId('node-id')).toHaveText('local-node');

  await page.getByTestId('cluster-current').click();
  await expect(page.getByTestId('cluster-option')).toHaveCount(1);
  await page.getByTestId('cluster-add').click();
  const dialog = page.getByTestId('add-cluster-dialog');
  await dialog.getByTestId('add-cluster-name').fill('lab');
  await dialog.getByTestId('add-cluster-url').fill(master.url);
  await dialog.getByTestId('add-cluster-token').fill(TEST_CONSOLE_TOKEN);
  await dialog.getByTestId('add-cluster-submit').click();
  await expect(dialog.getByTestId('add-cluster-token-error')).toContainText('refused the token');
  await expect(dialog.getByTestId('add-cluster-token')).toHaveAttribute('aria-invalid', 'true');
  await expect(dialog.getByTestId('add-cluster-url-error')).toHaveCount(0);
  await page.screenshot({ path: shot('remote-add-wrong-token'), fullPage: true });
  expect(clusterListSchema.parse(await get(local, '/router/v1/console/clusters')).clusters).toHaveLength(1);

  await dialog.getByTestId('add-cluster-token').fill(REMOTE_TOKEN);
  await dialog.getByTestId('add-cluster-submit').click();
  await expect(dialog).toHaveCount(0);
  const { clusters } = clusterListSchema.parse(await get(local, '/router/v1/console/clusters'));
  expect(clusters.map((c) => [c.name, c.reachable, c.role, c.nodeId])).toEqual([
    ['local', true, 'standalone', 'local-node'],
    ['lab', true, 'master', 'r-master'],
  ]);
  clusterId = clusters[1].id;

  await page.getByTestId('cluster-current').click();
  const option = page.locator(`[data-testid="cluster-option"][data-cluster-id="${clusterId}"]`);
  await expect(option.getByTestId('cluster-name')).toHaveText('lab');
  await expect(option).toHaveAttribute('data-dot', 'ok');
  await option.getByTestId('cluster-pick').click();
  // The header now describes the remote master; the address keeps the choice.
  await expect(page.getByTestId('node-id')).toHaveText('r-master');
  await expect(page.getByTestId('node-role')).toHaveText('master');
  expect(new URL(page.url()).searchParams.get('cluster')).toBe(clusterId);
  await page.reload();
  await expect(page.getByTestId('cluster-current-name')).toHaveText('lab');
  await expect(page.getByTestId('node-id')).toHaveText('r-master');
});

test('issue #26 item 6: editing a profile, a new URL asks for the token again and the stored token goes nowhere else', async ({
  page,
}) => {
  const seen: string[] = [];
  const trap = createServer((req, res) => {
    seen.push(req.headers.authorization ?? '');
    res.writeHead(401).end();
  });
  const port = await freePort();
  await new Promise<void>((r) => trap.listen(port, '127.0.0.1', r));
  try {
    await page.goto(`${local.url}/?token=${TEST_CONSOLE_TOKEN}`);
    await page.getByTestId('cluster-current').click();
    await page
      .locator(`[data-testid="cluster-option"][data-cluster-id="${clusterId}"]`)
      .getByTestId('cluster-edit')
      .click();
    const dialog = page.getByTestId('add-cluster-dialog');
    await expect(dialog.getByTestId('add-cluster-url')).toHaveValue(master.url);
    await expect(dialog.getByTestId('add-cluster-token')).toHaveValue('');
    await dialog.getByTestId('add-cluster-url').fill(`http://127.0.0.1:${port}`);
    await expect(dialog.getByTestId('add-cluster-token')).toHaveAttribute('aria-required', 'true');
    await dialog.getByTestId('add-cluster-submit').click();
    await expect(dialog.getByTestId('add-cluster-token-error')).toContainText('needs the token again');
    await expect(dialog.getByTestId('add-cluster-token')).toHaveAttribute('aria-invalid', 'true');
    await page.screenshot({ path: shot('remote-edit-url-needs-token'), fullPage: true });
    expect(seen).toEqual([]);
    // The node says the same to a PATCH that skips the dialog.
    const direct = await fetch(`${local.url}/router/v1/console/clusters/${clusterId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${port}` }),
    });
    expect(direct.status).toBe(400);
    expect(((await direct.json()) as { error: { param: string } }).error.param).toBe('token');
    expect(seen).toEqual([]);
    await dialog.getByTestId('add-cluster-cancel').click();
    await expect(dialog).toHaveCount(0);
    const { clusters } = clusterListSchema.parse(await get(local, '/router/v1/console/clusters'));
    expect(clusters.find((c) => c.id === clusterId)?.url).toBe(master.url);
  } finally {
    trap.close();
  }
});

test('Models: the routing-only master shows the merged catalog with the slave’s replica and its lane state', async ({
  page,
}) => {
  await openRemote(page, 'models');
  const row = page.locator('[data-testid="catalog-row"][data-model-id="model-b"]');
  await expect(row).toBeVisible();
  const replica = row.locator('[data-testid="catalog-replica"][data-node-id="gpu-b"]');
  await expect(replica.getByTestId('replica-local-id')).toHaveText('b');
  await expect(replica.getByTestId('replica-available')).toHaveText('available');
  await expect(replica.getByTestId('replica-lane')).toHaveText('ready');
  await expect(replica.getByTestId('replica-detail')).toHaveText('0 active · 0 queued');
  await expect(page.getByTestId('models-empty')).toHaveCount(0);
  await expect(page.getByTestId('models-page')).not.toContainText('This node has no models');
  // Nothing of the local node.
  await expect(page.getByTestId('models-page')).not.toContainText('local-model');
  await page.screenshot({ path: shot('remote-models'), fullPage: true });

  // The local cluster, switched back to, shows its own models again (a fresh store: nothing of the remote).
  await page.getByTestId('cluster-current').click();
  await page.locator('[data-testid="cluster-option"][data-cluster-id="local"]').getByTestId('cluster-pick').click();
  await expect(page.getByTestId('node-id')).toHaveText('local-node');
  await expect(page.locator('[data-testid="model-row"][data-model-id="local-model"]')).toBeVisible();
  await expect(page.getByTestId('catalog-table')).toHaveCount(0);
  expect(new URL(page.url()).searchParams.get('cluster')).toBeNull();
});

test('Nodes, Links and Lending show the remote cluster; the log exports through the proxy', async ({ page }) => {
  await openRemote(page, 'nodes');
  const card = (id: string) => page.locator(`[data-testid="node-card"][data-node-id="${id}"]`);
  await expect(page.getByTestId('node-card')).toHaveCount(2);
  await expect(card('r-master').getByTestId('node-health')).toHaveText('this node');
  await expect(card('gpu-b').getByTestId('node-health')).toHaveText('healthy');
  await page.screenshot({ path: shot('remote-nodes'), fullPage: true });

  await page.getByTestId('nav-links').click();
  const lane = page.getByTestId('lane-text');
  await expect(lane.getByTestId('links-empty-text')).toBeVisible();
  await expect(lane.getByTestId('link-anchor').locator('option', { hasText: 'b on gpu-b' })).toHaveCount(1);
  await expect(lane.getByTestId('link-anchor').locator('option', { hasText: 'local-model' })).toHaveCount(0);
  await page.screenshot({ path: shot('remote-links'), fullPage: true });

  await page.getByTestId('nav-lending').click();
  await expect(page.getByTestId('node-build-row')).toHaveCount(2);
  await expect(page.locator('[data-testid="node-build-row"][data-node-id="gpu-b"]')).toBeVisible();
  await expect(page.getByTestId('decision-log')).toBeVisible();
  await expect(page.getByTestId('lending-error')).toHaveCount(0);
  // The lease timeline reads the remote's rows through the proxy too: the slave's own job and load are on it.
  await expect(page.getByTestId('timeline-count-own')).not.toHaveAttribute('data-count', '0');
  await expect(page.getByTestId('timeline-count-load')).not.toHaveAttribute('data-count', '0');
  await expect(page.getByTestId('timeline-error')).toHaveCount(0);
  const [csv] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-button').click()]);
  expect(csv.suggestedFilename()).toMatch(/\.csv$/);
  expect(readFileSync((await csv.path())!, 'utf8').startsWith('id,at,node_id,router_version,kind,event,')).toBe(true);
  await page.screenshot({ path: shot('remote-lending'), fullPage: true });
});

test('Runtime: any node’s blob can be picked; a routing strategy written lands on the remote, not locally', async ({
  page,
}) => {
  const slaveBlob = runtimeHealthSchema.parse(
    await get(master, '/router/v1/console/runtime.health?node=gpu-b', REMOTE_TOKEN),
  );
  expect(slaveBlob.published).toBe(true);
  const served = slaveBlob.published ? slaveBlob.blob.servingConfig?.servedModel : undefined;
  expect(served).toBeTruthy();
  const localBefore = routingViewSchema.parse(await get(local, '/router/v1/console/runtime.routing')).desired;

  await openRemote(page, 'runtime');
  await expect(page.getByTestId('runtime-banner')).toBeVisible();
  // The routing-only master serves no model: no serving config in its own blob.
  await expect(page.getByTestId('serving-config-empty')).toBeVisible();
  const picker = page.getByTestId('runtime-node');
  await expect(picker.locator('option')).toHaveText(['r-master (this node)', 'gpu-b']);
  const [read] = await Promise.all([
    page.waitForResponse(
      (r) =>
        r.url().includes(`/router/v1/console/clusters/${clusterId}/console/runtime.health?node=gpu-b`) &&
        r.status() === 200,
    ),
    picker.selectOption('gpu-b'),
  ]);
  expect(read.ok()).toBe(true);
  await expect(page.getByTestId('serving-servedModel-value')).toHaveText(served!);
  await expect(page.getByTestId('routing-card')).toBeVisible();
  await page.screenshot({ path: shot('remote-runtime-slave'), fullPage: true });

  await page.getByTestId('strategy-least-request').click();
  await expect(page.getByTestId('routing-apply')).toBeEnabled();
  await page.getByTestId('routing-apply').click();
  await expect(page.getByTestId('routing-desired-value')).toHaveText('least-request');
  expect(
    routingViewSchema.parse(await get(master, '/router/v1/console/runtime.routing', REMOTE_TOKEN)).desired?.strategy,
  ).toBe('least-request');
  expect(routingViewSchema.parse(await get(local, '/router/v1/console/runtime.routing')).desired).toEqual(localBefore);
  await page.screenshot({ path: shot('remote-runtime-routing'), fullPage: true });
});

test('the remote stopped: the switcher and every screen say so', async ({ page }) => {
  await openRemote(page, 'models');
  await expect(page.getByTestId('catalog-row')).not.toHaveCount(0);
  await Promise.all([master.stop(), slave.stop()]);

  await expect(page.getByTestId('cluster-unreachable')).toContainText("cluster 'lab'", { timeout: 15_000 });
  await expect(page.getByTestId('models-error')).toContainText("cluster 'lab'");
  await expect(page.getByTestId('connection-status')).toHaveText('unreachable');
  await expect(page.getByTestId('cluster-current').getByTestId('cluster-dot')).toHaveAttribute('data-dot', 'bad', {
    timeout: 15_000,
  });
  await page.getByTestId('cluster-current').click();
  const option = page.locator(`[data-testid="cluster-option"][data-cluster-id="${clusterId}"]`);
  await expect(option).toHaveAttribute('data-dot', 'bad');
  await expect(option.getByTestId('cluster-error')).toContainText(/could not (be )?reach/);
  await expect(page.locator('[data-testid="cluster-option"][data-cluster-id="local"]')).toHaveAttribute(
    'data-dot',
    'ok',
  );
  await page.screenshot({ path: shot('remote-unreachable'), fullPage: true });
  await page.getByTestId('cluster-current').click();

  for (const [screen, error] of [
    ['nodes', 'nodes-error'],
    ['lending', 'lending-error'],
    ['links', 'links-models-error'],
    ['runtime', 'runtime-error'],
  ] as const) {
    await page.getByTestId(`nav-${screen}`).click();
    await expect(page.getByTestId(`${screen}-page`)).toBeVisible();
    await expect(page.getByTestId('cluster-unreachable')).toBeVisible();
    await expect(page.getByTestId(error)).toContainText("cluster 'lab'");
  }
  await page.screenshot({ path: shot('remote-unreachable-runtime'), fullPage: true });

  // Forgetting the profile goes back to the local cluster.
  await page.getByTestId('cluster-current').click();
  await page
    .locator(`[data-testid="cluster-option"][data-cluster-id="${clusterId}"]`)
    .getByTestId('cluster-remove')
    .click();
  await expect(page.getByTestId('cluster-current-name')).toHaveText('local');
  await expect(page.getByTestId('node-id')).toHaveText('local-node');
  expect(clusterListSchema.parse(await get(local, '/router/v1/console/clusters')).clusters).toHaveLength(1);
});

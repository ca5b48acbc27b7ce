import { fileURLToPath } from 'node:url';
import { expect, test, type Page } from '@playwright/test';
import type { ModelConfigInput } from '../../src-router/config';
import { decisionPageSchema, lendingViewSchema, timelinePageSchema } from '../../src-router/contract';
import { startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';
import { freePort } from './harness/router-node';

/**
 * The Lending tab's lease timeline against a real cluster: a master and one slave as separate `routerdesk node`
 * processes with linked sim text models (the master's slow `a` lends to the slave's faster `b`). A burst to the
 * master produces a lease and lent requests; the timeline shows the lease, the lent requests and the borrowed jobs
 * on the slave's lane, and hovering the lease shows its decision row with every variable.
 */

const shot = (name: string) => fileURLToPath(new URL(`../../test-results/${name}.png`, import.meta.url));

const CLUSTER_TOKEN = 'e2e-lease-timeline-token-01234';
const LENDING = {
  token: CLUSTER_TOKEN, health_interval: '400ms', sync_interval: '400ms', scheduling_min_samples: 2, scheduling_refresh_interval: '400ms', offload_probe_idle: '300ms',
};
const simText = (name: string, tokenTime: string): ModelConfigInput => ({
  name, backend: 'sim', capabilities: ['text'], contextsize: 4096, parallel: 1, sim: { load_time: '50ms', token_time: tokenTime },
});

let master: TestNode;
let slave: TestNode;

async function consoleCall<T>(path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`${master.url}${path}`, { ...init, headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}`, 'content-type': 'application/json' } });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const chat = (node: TestNode, model: string) =>
  fetch(`${node.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello there' }], max_tokens: 8 }),
  }).then((r) => r.status);

async function openLending(page: Page) {
  await page.goto(`${master.url}/?token=${TEST_CONSOLE_TOKEN}`);
  await expect(page.getByTestId('connection-status')).toHaveText('online');
  await page.getByTestId('nav-lending').click();
  await expect(page.getByTestId('lending-page')).toBeVisible();
}

test.beforeAll(async () => {
  test.setTimeout(60_000);
  const [mp, sp] = [await freePort(), await freePort()];
  const [masterUrl, slaveUrl] = [`http://127.0.0.1:${mp}`, `http://127.0.0.1:${sp}`];
  [slave, master] = await Promise.all([
    startNode({ models: { b: simText('model-b', '20ms') }, config: { server: { port: sp }, cluster: { role: 'slave', node_id: 'gpu-b', master_url: masterUrl, public_url: slaveUrl, ...LENDING } } }),
    startNode({ models: { a: simText('model-a', '100ms') }, config: { server: { port: mp }, cluster: { role: 'master', node_id: 'master', slave_urls: [slaveUrl], ...LENDING } } }),
  ]);
  await expect(async () => {
    const { nodes } = await consoleCall<{ nodes: { healthy: boolean }[] }>('/router/v1/console/cluster/nodes');
    expect(nodes.map((n) => n.healthy)).toEqual([true, true]);
  }).toPass({ timeout: 15_000, intervals: [100] });
  // Each model's own fit (scheduling_min_samples: 2), then the link, applied on both ends.
  for (let i = 0; i < 2; i++) expect(await Promise.all([chat(master, 'model-a'), chat(slave, 'model-b')])).toEqual([200, 200]);
  await consoleCall('/router/v1/site/text-routing-groups', {
    method: 'POST', body: JSON.stringify({ owner: { node_id: 'master', model: 'a' }, helper: { node_id: 'gpu-b', model: 'b' }, acknowledge_different_weights: true }),
  });
  await expect(async () => {
    const view = lendingViewSchema.parse(await consoleCall('/router/v1/console/lending'));
    expect(view.held.map((n) => [n.nodeId, n.models.map((m) => m.model)])).toEqual([['master', ['a']], ['gpu-b', ['b']]]);
  }).toPass({ timeout: 15_000, intervals: [100] });
  // The burst: a backlog on the master's `a`, lent to `b` under a lease.
  expect(await Promise.all(Array.from({ length: 10 }, () => chat(master, 'model-a')))).toEqual(Array(10).fill(200));
  await expect(async () => {
    const lent = decisionPageSchema.parse(await consoleCall('/router/v1/console/decisions?event=lent&limit=10'));
    expect(lent.rows.length).toBeGreaterThan(0);
    const rows = timelinePageSchema.parse(await consoleCall('/router/v1/console/timeline'));
    expect(rows.nodes.find((n) => n.nodeId === 'gpu-b')?.requests.some((r) => r.lentFrom === 'master/a')).toBe(true);
  }).toPass({ timeout: 15_000, intervals: [100] });
});

test.afterAll(async () => {
  await Promise.all([master?.stop(), slave?.stop()]);
});

test('Lending: the timeline shows the lease, the lent requests and the borrowed jobs; hovering the lease shows its decision row', async ({ page }) => {
  await page.setViewportSize({ width: 1400, height: 1000 });
  await openLending(page);
  const card = page.getByTestId('timeline-card');
  await expect(card.getByTestId('timeline-canvas')).toBeVisible();
  const count = (kind: string) => card.getByTestId(`timeline-count-${kind}`);
  await expect(count('borrowed')).not.toHaveAttribute('data-count', '0');
  await expect(count('lent')).not.toHaveAttribute('data-count', '0');
  await expect(count('own')).not.toHaveAttribute('data-count', '0');
  const leases = Number(await count('lease').getAttribute('data-count')) + Number(await count('probe').getAttribute('data-count'));
  expect(leases).toBeGreaterThan(0);

  // The lease in the canvas's fallback list, hovered on the canvas at its place.
  const lease = card.locator('[data-testid="timeline-item"][data-kind="lease"], [data-testid="timeline-item"][data-kind="probe"]').first();
  await expect(lease).toContainText('lease → gpu-b/b');
  const [x, y] = [Number(await lease.getAttribute('data-x')), Number(await lease.getAttribute('data-y'))];
  const box = (await card.getByTestId('timeline-canvas').boundingBox())!;
  await page.mouse.move(box.x + x, box.y + y);
  const hover = card.getByTestId('timeline-hover');
  await expect(hover).toBeVisible();
  await expect(hover.getByTestId('timeline-hover-title')).toContainText('lease → gpu-b/b');
  const variable = (name: string) => hover.locator(`[data-testid="timeline-hover-var"][data-name="${name}"] dd`);
  await expect(variable('event')).toHaveText('lease_updated');
  await expect(variable('node_id')).toHaveText('master');
  await expect(variable('helper_node')).toHaveText('gpu-b');
  await expect(variable('slots')).toHaveText(/^[12]$/);
  await expect(variable('details.ttlMs')).not.toHaveText('—');
  // Every variable of the row: each column of the log, then the details.
  expect(await hover.getByTestId('timeline-hover-var').count()).toBeGreaterThanOrEqual(30);
  await page.screenshot({ path: shot('lease-timeline'), fullPage: true });

  // An instant (a lent request, or a grant or hold drawn at the same moment) shows its own row.
  const lent = card.locator('[data-testid="timeline-item"][data-kind="lent"]').first();
  await page.mouse.move(box.x + Number(await lent.getAttribute('data-x')), box.y + Number(await lent.getAttribute('data-y')));
  await expect(hover).toHaveAttribute('data-kind', /^(lent|grant|hold|returned)$/);
  await expect(variable('event')).toHaveText(/^(lent|granted|probe|held_for_helper|returned)$/);

  // Zoom: out then in (a zoomed viewport stays put while new rows arrive); "whole range" goes back to following them.
  const canvas = card.getByTestId('timeline-canvas');
  await card.getByTestId('timeline-zoom-out').click();
  await expect(card.getByTestId('timeline-zoom-reset')).toBeEnabled();
  const span = Number(await canvas.getAttribute('data-span-ms'));
  await card.getByTestId('timeline-zoom-in').click();
  await expect(async () => expect(Math.abs(Number(await canvas.getAttribute('data-span-ms')) - span / 2)).toBeLessThanOrEqual(1)).toPass({ timeout: 5_000, intervals: [50] });
  await card.getByTestId('timeline-zoom-reset').click();
  await expect(card.getByTestId('timeline-zoom-reset')).toBeDisabled();
});

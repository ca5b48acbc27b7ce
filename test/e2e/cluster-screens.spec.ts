import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, type Page, test } from '@playwright/test';
import type { ModelConfigInput } from '../../src-router/config';
import { decisionPageSchema, lendingViewSchema, linkListSchema } from '../../src-router/contract';
import { startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';
import { freePort } from './harness/router-node';

/**
 * The Nodes, Links and Lending screens (UI-1, UI-2, UI-3, UI-6) against a real cluster: a master and one slave as
 * separate `routerdesk node` processes, each with a sim text model (one request at a time, a context window: LLM-1
 * eligible). The master's model lends to the slave's once the Links screen has linked them; a burst of requests to
 * the master builds a backlog that the Nodes screen shows held and the Lending screen shows decided.
 */

const shot = (name: string) => fileURLToPath(new URL(`../../test-results/${name}.png`, import.meta.url));

const CLUSTER_TOKEN = 'e2e-cluster-screens-token-0123';
/** The same lending settings on both nodes, so the slave runs the master's settings. Fits after 2 samples (PRICE-2). */
const LENDING = {
  token: CLUSTER_TOKEN,
  health_interval: '400ms',
  sync_interval: '400ms',
  scheduling_min_samples: 2,
  scheduling_refresh_interval: '400ms',
  offload_probe_idle: '300ms',
};
const simText = (name: string, tokenTime: string, extra: Partial<ModelConfigInput> = {}): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['text'],
  contextsize: 4096,
  parallel: 1,
  sim: { load_time: '50ms', token_time: tokenTime },
  ...extra,
});
/** The master's `a` is slow (8 tokens × 100 ms); the slave's `b` is faster, so it gets 2 slots (LEASE-9). */
const MASTER_MODELS = {
  a: simText('model-a', '100ms'),
  img: { name: 'sim-image', backend: 'sim', capabilities: ['image'] } as ModelConfigInput,
};
const SLAVE_MODELS = { b: simText('model-b', '30ms'), wide: simText('wide', '30ms', { parallel: 4 }) };

let master: TestNode;
let slave: TestNode;

test.describe.configure({ mode: 'serial' });

async function consoleGet<T>(path: string): Promise<T> {
  const res = await fetch(`${master.url}${path}`, { headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` } });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** The same request every time: the fits price constant work (PRICE-2), so the burst must match the warm-up. */
const chat = (node: TestNode, model: string) =>
  fetch(`${node.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello there' }], max_tokens: 8 }),
  }).then(async (r) => ({ status: r.status, body: await r.text() }));

async function open(page: Page, screen: 'nodes' | 'links' | 'lending') {
  await page.goto(`${master.url}/?token=${TEST_CONSOLE_TOKEN}`);
  await expect(page.getByTestId('connection-status')).toHaveText('online');
  await page.getByTestId(`nav-${screen}`).click();
  await expect(page.getByTestId(`${screen}-page`)).toBeVisible();
  await expect(page.getByTestId(`nav-${screen}`)).toHaveAttribute('aria-current', 'page');
}

test.beforeAll(async () => {
  test.setTimeout(60_000);
  const [mp, sp] = [await freePort(), await freePort()];
  const [masterUrl, slaveUrl] = [`http://127.0.0.1:${mp}`, `http://127.0.0.1:${sp}`];
  [slave, master] = await Promise.all([
    startNode({
      models: SLAVE_MODELS,
      config: {
        server: { port: sp },
        cluster: { role: 'slave', node_id: 'gpu-b', master_url: masterUrl, public_url: slaveUrl, ...LENDING },
      },
    }),
    startNode({
      models: MASTER_MODELS,
      config: {
        server: { port: mp },
        cluster: { role: 'master', node_id: 'master', slave_urls: [slaveUrl], ...LENDING },
      },
    }),
  ]);
  await expect(async () => {
    const { nodes } = await consoleGet<{ nodes: { healthy: boolean }[] }>('/router/v1/console/cluster/nodes');
    expect(nodes.map((n) => n.healthy)).toEqual([true, true]);
  }).toPass({ timeout: 15_000, intervals: [100] });
  // Each model's own fit (scheduling_min_samples: 2), measured on its own node.
  for (let i = 0; i < 2; i++) {
    const answers = await Promise.all([chat(master, 'model-a'), chat(slave, 'model-b')]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
  }
});

test.afterAll(async () => {
  await Promise.all([master?.stop(), slave?.stop()]);
});

test('Nodes: both nodes healthy, with their build and the master’s settings', async ({ page }) => {
  const { nodes } = await consoleGet<{ nodes: { nodeId: string; version: string }[] }>(
    '/router/v1/console/cluster/nodes',
  );
  await open(page, 'nodes');
  await expect(page.getByTestId('node-card')).toHaveCount(2);
  const card = (id: string) => page.locator(`[data-testid="node-card"][data-node-id="${id}"]`);
  await expect(card('master').getByTestId('node-health')).toHaveText('this node');
  await expect(card('gpu-b').getByTestId('node-health')).toHaveText('healthy');
  for (const n of nodes) await expect(card(n.nodeId).getByTestId('node-build')).toHaveText(n.version);
  await expect(card('master').getByTestId('node-settings')).toHaveText('reference');
  await expect(card('gpu-b').getByTestId('node-settings')).toHaveText("master's settings");
  await expect(card('gpu-b').getByTestId('node-url')).toHaveText(slave.url);
  // No link yet: nothing is enrolled, so nothing can be held.
  await expect(card('master').getByTestId('node-not-enrolled')).toBeVisible();
});

test('Nodes: a request straight to a backend of a model in no link is listed under active requests (UI-2)', async ({
  page,
}) => {
  await open(page, 'nodes');
  const card = (id: string) => page.locator(`[data-testid="node-card"][data-node-id="${id}"]`);
  // Streamed through the master to the slave's `wide` (never linked): ~200 tokens × 30 ms, active for ~6 s.
  const controller = new AbortController();
  const res = await fetch(`${master.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'wide',
      messages: [{ role: 'user', content: 'long one' }],
      max_tokens: 200,
      stream: true,
    }),
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const reading = res.body!.pipeTo(new WritableStream()).catch(() => {});
  const row = card('gpu-b').getByTestId('active-requests-row');
  await expect(async () => {
    await page.getByTestId('nodes-refresh').click();
    await expect(page.getByTestId('nodes-refresh')).toHaveText('Refresh');
    await expect(row).toHaveCount(1, { timeout: 100 });
  }).toPass({ timeout: 8_000, intervals: [50] });
  await expect(row).toHaveAttribute('data-via', 'backend');
  await expect(row.getByTestId('active-model')).toHaveText('wide');
  await expect(row.getByTestId('active-lane')).toHaveText('text');
  await expect(row.getByTestId('active-stream')).toHaveText('streamed');
  await expect(row.getByTestId('active-lent-from')).toHaveText('—');
  await expect(row.getByTestId('active-started')).toHaveText(/^\d{2}:\d{2}:\d{2}\.\d{3}$/);
  // The master forwarded it: it is the slave's to list. Neither node holds anything (no link).
  await expect(card('master').getByTestId('active-requests-row')).toHaveCount(0);
  await expect(card('gpu-b').getByTestId('node-not-enrolled')).toBeVisible();
  await page.screenshot({ path: shot('nodes-active'), fullPage: true });
  controller.abort();
  await reading;
  // Gone once it ends (the client left: the request is cancelled at the engine).
  await expect(async () => {
    await page.getByTestId('nodes-refresh').click();
    await expect(page.getByTestId('nodes-refresh')).toHaveText('Refresh');
    await expect(row).toHaveCount(0, { timeout: 100 });
  }).toPass({ timeout: 8_000, intervals: [50] });
});

test('Links: a text link master → slave needs the different-weights acknowledgement, then a flag is toggled', async ({
  page,
}) => {
  await open(page, 'links');
  const lane = page.getByTestId('lane-text');
  await expect(lane.getByTestId('links-empty-text')).toBeVisible();
  await lane.getByTestId('link-anchor').selectOption({ label: 'a on master (model-a)' });

  // Every candidate of the lane on the other node: the ineligible one disabled with the reason, not omitted.
  const candidate = (model: string) =>
    lane.locator(`[data-testid="link-candidate"][data-node="gpu-b"][data-model="${model}"]`);
  await expect(lane.getByTestId('link-candidate')).toHaveCount(2);
  await expect(candidate('b').getByTestId('link-candidate-weights')).toHaveText('different weights');
  await expect(candidate('b').getByTestId('link-candidate-radio')).toBeEnabled();
  await expect(candidate('wide').getByTestId('link-candidate-radio')).toBeDisabled();
  await expect(candidate('wide').getByTestId('link-candidate-reason')).toContainText('serves 4 requests at once');

  // Sim models have no weights file: different weights, so the first save asks for the acknowledgement.
  await candidate('b').getByTestId('link-candidate-radio').check();
  await expect(lane.getByTestId('link-save')).toBeEnabled();
  await lane.getByTestId('link-save').click();
  await expect(lane.getByTestId('link-ack-message')).toContainText(
    'b on gpu-b does not have the same weights as a on master',
  );
  await expect(lane.getByTestId('link-save')).toBeDisabled();
  await page.screenshot({ path: shot('links-ack'), fullPage: true });
  expect((await consoleGet<{ links: unknown[] }>('/router/v1/site/text-routing-groups')).links).toEqual([]);
  await lane.getByTestId('link-ack-checkbox').check();
  await lane.getByTestId('link-save').click();
  await expect(lane.getByTestId('link-saved')).toBeVisible();

  const row = lane.getByTestId('link-row');
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId('link-owner')).toHaveText('a on master');
  await expect(row.getByTestId('link-helper')).toHaveText('b on gpu-b');
  await expect(row.getByTestId('link-weights')).toHaveText('different weights · acknowledged');
  await expect(row.getByTestId('link-flag-load_if_unloaded')).toBeChecked();
  await expect(row.getByTestId('link-flag-restore_after_borrow')).not.toBeChecked();
  // The same pair again is now refused by the picker (duplicate), still listed.
  await lane.getByTestId('link-anchor').selectOption({ label: 'a on master (model-a)' });
  await expect(candidate('b').getByTestId('link-candidate-radio')).toBeDisabled();
  await expect(candidate('b').getByTestId('link-candidate-reason')).toContainText('already exists');

  await row.getByTestId('link-flag-restore_after_borrow').check();
  await expect(row.getByTestId('link-flag-restore_after_borrow')).toBeChecked();
  await expect(async () => {
    const list = linkListSchema.parse(await consoleGet('/router/v1/site/text-routing-groups'));
    expect(
      list.links.map((l) => [l.owner, l.helper, l.acknowledged, l.load_if_unloaded, l.restore_after_borrow]),
    ).toEqual([[{ node_id: 'master', model: 'a' }, { node_id: 'gpu-b', model: 'b' }, true, true, true]]);
  }).toPass({ timeout: 5_000 });
  // Back to the defaults for the lending below (no restore needed).
  await row.getByTestId('link-flag-restore_after_borrow').uncheck();
  await expect(row.getByTestId('link-flag-restore_after_borrow')).not.toBeChecked();
  await page.screenshot({ path: shot('links'), fullPage: true });

  // Applied on both ends (LEASE-1) before lending is exercised.
  await expect(async () => {
    const view = lendingViewSchema.parse(await consoleGet('/router/v1/console/lending'));
    expect(view.held.map((h) => [h.nodeId, h.models.map((m) => m.model)])).toEqual([
      ['master', ['a']],
      ['gpu-b', ['b']],
    ]);
  }).toPass({ timeout: 10_000, intervals: [100] });
});

test('Nodes: during a burst, held requests marked queued / held / lent with first arrival; active ones apart', async ({
  page,
}) => {
  await open(page, 'nodes');
  const card = page.locator('[data-testid="node-card"][data-node-id="master"]');
  await expect(card.getByTestId('node-held')).toBeVisible();

  const burst = Promise.all(Array.from({ length: 12 }, () => chat(master, 'model-a')));
  const heldRows = card.getByTestId('held-requests-row');
  await expect(async () => {
    await page.getByTestId('nodes-refresh').click();
    await expect(page.getByTestId('nodes-refresh')).toHaveText('Refresh');
    expect(await heldRows.count()).toBeGreaterThan(0);
  }).toPass({ timeout: 8_000, intervals: [50] });
  await page.screenshot({ path: shot('nodes'), fullPage: true });

  const marks = await heldRows.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-state')));
  for (const m of marks) expect(['queued', 'held', 'lent']).toContain(m);
  const arrivals = await card.getByTestId('request-first-arrival').allTextContents();
  for (const a of arrivals) expect(a).toMatch(/^\d{2}:\d{2}:\d{2}\.\d{3}$/);
  // Requests at the backend are listed only under active requests, and never more than the depth (QUEUE-1).
  const active = await card
    .getByTestId('active-requests-row')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-state')));
  expect(active.every((s) => s === 'active')).toBe(true);
  expect(active.length).toBeLessThanOrEqual(2);
  await expect(card.getByTestId('node-held').getByTestId('request-mark')).toHaveCount(marks.length);
  // Issue #15: a waiting request shows its position and predicted start and finish (the burst is the measured work:
  // the fit prices it); a lent one its helper and predicted finish there.
  const waitingRow = heldRows.filter({ has: page.getByTestId('request-position').getByText(/^\d+$/) });
  const lentRow = card.locator('[data-testid="held-requests-row"][data-state="lent"]');
  await expect(async () => {
    await page.getByTestId('nodes-refresh').click();
    await expect(page.getByTestId('nodes-refresh')).toHaveText('Refresh');
    await expect(waitingRow.first()).toBeVisible({ timeout: 100 });
    await expect(waitingRow.first().getByTestId('request-predicted-start')).toHaveText(/^(in \d.*|due)$/, {
      timeout: 100,
    });
    await expect(waitingRow.first().getByTestId('request-predicted-finish')).toHaveText(/^(in \d.*|due)$/, {
      timeout: 100,
    });
    await expect(waitingRow.first().getByTestId('request-helper')).toHaveText('—', { timeout: 100 });
  }).toPass({ timeout: 8_000, intervals: [50] });
  await expect(async () => {
    await page.getByTestId('nodes-refresh').click();
    await expect(page.getByTestId('nodes-refresh')).toHaveText('Refresh');
    await expect(lentRow.first()).toBeVisible({ timeout: 100 });
    await expect(lentRow.first().getByTestId('request-helper')).toHaveText('gpu-b/b', { timeout: 100 });
    await expect(lentRow.first().getByTestId('request-position')).toHaveText('—', { timeout: 100 });
    await expect(lentRow.first().getByTestId('request-predicted-finish')).toHaveText(/^(in \d.*|due)$/, {
      timeout: 100,
    });
  }).toPass({ timeout: 8_000, intervals: [50] });
  await expect(card.getByTestId('node-active').getByTestId('request-mark')).toHaveCount(0);
  // On the helper, a borrowed request at its engine names the owner it was lent from (UI-2).
  const borrowed = page
    .locator('[data-testid="node-card"][data-node-id="gpu-b"] [data-testid="active-requests-row"]')
    .filter({ has: page.getByTestId('active-lent-from').getByText('master/a') });
  await expect(async () => {
    await page.getByTestId('nodes-refresh').click();
    await expect(page.getByTestId('nodes-refresh')).toHaveText('Refresh');
    await expect(borrowed.first()).toBeVisible({ timeout: 100 });
  }).toPass({ timeout: 8_000, intervals: [20] });
  await expect(borrowed.first().getByTestId('active-model')).toHaveText('b');
  await expect(borrowed.first()).toHaveAttribute('data-via', 'router queue');

  const answers = await burst;
  expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
});

test('Lending: plan and dispatch rows folded, a line expands to every variable, the filtered log exports', async ({
  page,
}) => {
  // The burst above was decided by the master (plan rows) and dispatched by the owner, here the master too.
  await expect(async () => {
    const page1 = decisionPageSchema.parse(await consoleGet('/router/v1/console/decisions?limit=1000'));
    expect(page1.rows.some((r) => r.kind === 'plan' && r.event === 'granted')).toBe(true);
    expect(page1.rows.some((r) => r.kind === 'dispatch' && r.event === 'lent')).toBe(true);
  }).toPass({ timeout: 10_000, intervals: [200] });
  const view = lendingViewSchema.parse(await consoleGet('/router/v1/console/lending'));

  await open(page, 'lending');
  const lines = page.getByTestId('decision-line');
  await expect(
    page.locator('[data-testid="decision-line"][data-kind="plan"][data-event="granted"]').first(),
  ).toBeVisible();
  await expect(
    page.locator('[data-testid="decision-line"][data-kind="dispatch"][data-event="lent"]').first(),
  ).toBeVisible();

  // Builds and settings sync, the settings, decisions made.
  await expect(page.getByTestId('node-build-row')).toHaveCount(2);
  await expect(
    page.locator('[data-testid="node-build-row"][data-node-id="gpu-b"]').getByTestId('node-build-sync'),
  ).toHaveText("master's settings");
  await expect(
    page.locator('[data-testid="node-build-row"][data-node-id="gpu-b"]').getByTestId('node-build-version'),
  ).toHaveText(view.nodes[1].version!);
  await expect(page.getByTestId('setting-scheduling_min_samples')).toContainText('2');
  await expect(page.getByTestId('decisions-made')).toContainText('decisions made');

  // A folded line (several rows of one decision) opens to every variable of its newest decision.
  const folded = page
    .locator('[data-testid="decision-line"][data-kind="plan"]')
    .filter({ has: page.getByTestId('decision-count') })
    .first();
  await expect(folded).toBeVisible();
  expect(Number(await folded.getAttribute('data-count'))).toBeGreaterThan(1);
  await expect(folded.getByTestId('decision-span')).toContainText('–');
  await folded.getByTestId('decision-expand').click();
  const vars = page.getByTestId('decision-vars');
  await expect(vars).toHaveCount(1);
  for (const name of [
    'id',
    'at',
    'node_id',
    'router_version',
    'kind',
    'event',
    'trigger',
    'owner_model',
    'helper_model',
    'held',
    'backlog',
    'owner_drain_ms',
    'helper_service_ms',
    'service_source',
    'helper_idle_ms',
    'outcome',
    'reason',
    'slots',
  ]) {
    await expect(vars.getByTestId(`decision-var-${name}`)).toBeVisible();
  }
  await expect(vars.getByTestId('decision-var-kind')).toContainText('plan');
  await expect(vars.getByTestId('decision-var-owner_model')).toContainText('a');
  await expect(vars.getByTestId('decision-var-helper_node')).toContainText('gpu-b');
  await page.screenshot({ path: shot('lending'), fullPage: true });

  // Filter: plan rows only.
  await page.getByTestId('filter-kind').selectOption('plan');
  await page.getByTestId('filter-apply').click();
  await expect(async () => {
    const kinds = await lines.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind')));
    expect(kinds.length).toBeGreaterThan(0);
    expect(new Set(kinds)).toEqual(new Set(['plan']));
  }).toPass({ timeout: 5_000 });

  // Export the filtered log: a CSV whose header names the columns, plan rows only.
  const [csv] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-button').click()]);
  expect(csv.suggestedFilename()).toMatch(/^offload-decisions-.*\.csv$/);
  const text = readFileSync((await csv.path())!, 'utf8');
  const [header, ...rows] = text.trim().split(/\r?\n/);
  expect(header.split(',')).toEqual(
    expect.arrayContaining([
      'id',
      'at',
      'node_id',
      'router_version',
      'kind',
      'event',
      'owner_drain_ms',
      'helper_service_ms',
      'reason',
      'slots',
      'details',
    ]),
  );
  expect(header.startsWith('id,at,node_id,router_version,kind,event,')).toBe(true);
  expect(rows.length).toBeGreaterThan(0);
  const kindAt = header.split(',').indexOf('kind');
  expect(new Set(rows.map((r) => r.split(',')[kindAt]))).toEqual(new Set(['plan']));

  // JSON Lines too.
  await page.getByTestId('export-format').selectOption('jsonl');
  const [jsonl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-button').click()]);
  expect(jsonl.suggestedFilename()).toMatch(/\.jsonl$/);
  const objects = readFileSync((await jsonl.path())!, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { kind: string });
  expect(objects.length).toBe(rows.length);
  expect(objects.every((o) => o.kind === 'plan')).toBe(true);
});

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type APIRequestContext, expect, type Page, test } from '@playwright/test';
import { BenchStore } from '../../src-router/store/bench-store';
import { openStore } from '../../src-router/store/db';
import { type RouterNode, startRouterNode } from './harness/router-node';

/**
 * Runtime screen (RT-1..6) and Routing card (ROUTE-1..9) against real router nodes: one writable (routing polled
 * every 300 ms, one static route), one with `console.routing_writes_enabled: false`.
 */

const shot = (name: string) => fileURLToPath(new URL(`../../test-results/${name}.png`, import.meta.url));

const SIM_CHAT = {
  localId: 'sim-chat',
  yaml: 'name: sim-chat\nbackend: sim\ncapabilities: [text]\ncontextsize: 8192\nsim:\n  load_time: 50ms\n  token_time: 1ms\n',
};
const ROUTING_YAML = [
  'routing:',
  '  poll_interval: 300ms',
  '  strategy: round-robin',
  '  static_routes:',
  '    ext-model:',
  '      engine: clutch-layers',
  '      endpoints: [http://127.0.0.1:9/v1]',
].join('\n');

interface Blob {
  host?: string;
  version?: string;
  engine?: string;
  gpu?: { name?: string };
  cpu?: { model?: string; cores?: number };
  memory?: { total?: number };
  selfTests?: { name: string; status: string }[];
  servingConfig?: { servedModel?: string; maxModelLen?: number };
}

let node: RouterNode;
let readOnly: RouterNode;
/** ROUTE-8 by the seed's names: the environment wins over `console.routing_writes_enabled: true` / `console.operators`. */
let envReadOnly: RouterNode;
let envOperators: RouterNode;
const OPERATOR_TOKEN = 'ops-console-token-0123456789';

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  [node, readOnly, envReadOnly, envOperators] = await Promise.all([
    startRouterNode({ nodeId: 'e2e-runtime', models: [SIM_CHAT], extraYaml: ROUTING_YAML }),
    startRouterNode({
      nodeId: 'e2e-readonly',
      models: [SIM_CHAT],
      consoleLines: ['routing_writes_enabled: false'],
      extraYaml: 'routing:\n  poll_interval: 300ms',
    }),
    startRouterNode({
      nodeId: 'e2e-env-readonly',
      models: [SIM_CHAT],
      consoleLines: ['routing_writes_enabled: true'],
      env: { INFERENCE_DEPLOY_ENABLED: 'false' },
    }),
    startRouterNode({
      nodeId: 'e2e-env-operators',
      models: [SIM_CHAT],
      env: { INFERENCE_ADMIN_EMAILS: `ops@example.com=${OPERATOR_TOKEN}` },
      extraYaml: 'routing:\n  poll_interval: 300ms',
    }),
  ]);
});

test.afterAll(async () => {
  await Promise.all([node?.stop(), readOnly?.stop(), envReadOnly?.stop(), envOperators?.stop()]);
});

const auth = (n: RouterNode) => ({ Authorization: `Bearer ${n.consoleToken}` });

/** The blob as the node publishes it, once it is published. */
async function publishedBlob(request: APIRequestContext, n: RouterNode): Promise<Blob> {
  let blob: Blob | undefined;
  await expect(async () => {
    const res = await request.get(`${n.url}/router/v1/console/runtime.health`, { headers: auth(n) });
    const body = (await res.json()) as { published: boolean; blob?: Blob };
    expect(body.published).toBe(true);
    blob = body.blob;
  }).toPass({ timeout: 15_000 });
  return blob!;
}

async function openRuntime(page: Page, n: RouterNode, token = n.consoleToken) {
  await page.goto(`${n.url}/?token=${token}`);
  await expect(page.getByTestId('models-page')).toBeVisible();
  await page.getByTestId('nav-runtime').click();
  await expect(page.getByTestId('runtime-page')).toBeVisible();
  await expect(page.getByTestId('nav-runtime')).toHaveAttribute('aria-current', 'page');
}

test('banner, gauges and self-tests show the published blob; absent fields are — and never NaN', async ({
  page,
  request,
}) => {
  const blob = await publishedBlob(request, node);
  await openRuntime(page, node);

  await expect(page.getByTestId('banner-host')).toHaveText(blob.host!);
  await expect(page.getByTestId('banner-version')).toHaveText(blob.version!);
  await expect(page.getByTestId('banner-engine')).toHaveText(blob.engine ?? 'not reported');
  const tests = blob.selfTests ?? [];
  const passed = tests.filter((t) => t.status === 'pass').length;
  expect(tests.length).toBeGreaterThan(0);
  await expect(page.getByTestId('banner-nominal')).toContainText(`${passed}/${tests.length}`);
  await expect(page.getByTestId('runtime-banner')).not.toContainText(/listen/i);

  // Self-tests in the published order, each with its status.
  await expect(page.getByTestId('self-test-name')).toHaveText(tests.map((t) => t.name));
  await expect(page.getByTestId('self-test-status')).toHaveText(tests.map((t) => t.status));

  // GPU: nothing to read here (no nvidia-smi) → —, not reported, no CUDA tag.
  if (blob.gpu === undefined) {
    await expect(page.getByTestId('gauge-gpu-name')).toHaveText('—');
    await expect(page.getByTestId('gauge-gpu-tag')).toHaveCount(0);
    await expect(page.getByTestId('gauge-gpu-donut-label')).toHaveText('—');
    await expect(page.getByTestId('gauge-gpu-donut-sub')).toHaveText('not reported');
    for (const row of ['vram', 'temperature', 'power'])
      await expect(page.getByTestId(`gauge-gpu-${row}-value`)).toHaveText('—');
  } else {
    await expect(page.getByTestId('gauge-gpu-name')).toHaveText(blob.gpu.name ?? '—');
  }
  await expect(page.getByTestId('gauge-cpu-name')).toContainText(blob.cpu!.model!);
  await expect(page.getByTestId('gauge-cpu-detail')).toHaveText(`· ${blob.cpu!.cores} cores`);
  await expect(page.getByTestId('gauge-memory-name')).toContainText('GiB total');
  await expect(page.getByTestId('gauge-memory-donut-label')).toHaveText(/^\d+%$/);
  // No model loaded yet: no serving config, no tensor-parallel or max context.
  await expect(page.getByTestId('serving-config-empty')).toHaveText('The engine did not report serving config.');
  await expect(page.getByTestId('gauge-cpu-max-context-value')).toHaveText('—');
  await expect(page.getByTestId('runtime-page')).not.toContainText('NaN');
  await expect(page.getByTestId('routing-card')).toBeVisible();
  await expect(page.getByRole('button', { name: /restart/i })).toHaveCount(0);

  await page.screenshot({ path: shot('runtime'), fullPage: true });
});

test('serving config appears once a chat request loads the model; Refresh only re-reads', async ({ page, request }) => {
  await openRuntime(page, node);
  await expect(page.getByTestId('runtime-banner')).toBeVisible();
  const chat = await request.post(`${node.url}/v1/chat/completions`, {
    data: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 },
  });
  expect(chat.status()).toBe(200);

  const methods: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/router/v1/console/')) methods.push(`${r.method()} ${new URL(r.url()).pathname}`);
  });
  await expect(async () => {
    const reread = page.waitForResponse((r) => r.url().includes('/runtime.health'));
    await page.getByTestId('runtime-refresh').click();
    await reread;
    await expect(page.getByTestId('serving-servedModel-value')).toHaveText('sim-chat', { timeout: 500 });
  }).toPass({ timeout: 15_000 });
  await expect(page.getByTestId('serving-maxModelLen-value')).toHaveText('8,192 tokens');
  await expect(page.getByTestId('serving-dtype')).toHaveCount(0); // not in the blob: hidden, not filled in
  await expect(page.getByTestId('gauge-cpu-max-context-value')).toHaveText('8.2k');
  await expect(page.getByTestId('gauge-memory-mapped-models-value')).toHaveText('1');
  // Refresh re-reads; it never asks the node to do anything.
  expect(methods.length).toBeGreaterThan(0);
  expect(methods.filter((m) => !m.startsWith('GET '))).toEqual([]);
  await page.screenshot({ path: shot('runtime-serving'), fullPage: true });
});

test('routing: least-request applied reaches engine in sync; routesEngine only when a profile is picked', async ({
  page,
  request,
}) => {
  await openRuntime(page, node);
  const pill = page.getByTestId('routing-pill');
  await expect(pill).toHaveText('engine in sync');
  await expect(page.getByTestId('routing-effective-value')).toHaveText('round-robin');
  await expect(page.getByTestId('routing-desired-value')).toHaveText('— (module default)');
  await expect(page.getByTestId('strategy-round-robin')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('routing-apply')).toBeDisabled();
  await expect(page.getByTestId('multi-spec')).toHaveValue('multi:least-request:3,least-kv-cache:1');
  // ROUTE-5: untouched, the metric-profile control shows the profile in force (the card's row says the same).
  const profile = page.getByTestId('metric-profile');
  await expect(profile).toHaveValue('');
  await expect(profile.locator('option:checked')).toHaveText(
    (await page.getByTestId('routing-profile-value').textContent())!,
  );

  // Upstreams: the static route, never called.
  const up = page.locator('[data-testid="upstream-row"][data-model="ext-model"]');
  await expect(up.getByTestId('upstream-status')).toHaveText('untried');
  await expect(up.getByTestId('upstream-last-answer')).toHaveText('never');

  await page.getByTestId('strategy-least-request').click();
  await expect(page.getByTestId('requires-hint')).toContainText('num_requests_running, num_requests_waiting');
  await expect(page.getByTestId('requires-hint')).toContainText('random ready pod');
  await page.getByTestId('routing-reset').click();
  await expect(page.getByTestId('strategy-round-robin')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('requires-hint')).toContainText('Needs no scraped metrics');

  await page.getByTestId('strategy-least-request').click();
  await expect(page.getByTestId('routing-apply')).toBeEnabled();
  const [post] = await Promise.all([
    page.waitForRequest((r) => r.url().endsWith('/runtime.setRouting')),
    page.getByTestId('routing-apply').click(),
  ]);
  expect(post.postDataJSON()).toEqual({ strategy: 'least-request' });

  await expect(pill).toHaveText('engine in sync', { timeout: 15_000 });
  await expect(page.getByTestId('routing-desired-value')).toHaveText('least-request');
  await expect(page.getByTestId('routing-effective-value')).toHaveText('least-request');
  await expect(page.getByTestId('routing-source-value')).toHaveText('routing key');
  await expect(page.getByTestId('strategy-least-request')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('routing-apply')).toBeDisabled();

  // Picking the profile is a change of its own, and the only way routesEngine goes out.
  await page.getByTestId('metric-profile').selectOption('clutch-layers');
  const [post2] = await Promise.all([
    page.waitForRequest((r) => r.url().endsWith('/runtime.setRouting')),
    page.getByTestId('routing-apply').click(),
  ]);
  expect(post2.postDataJSON()).toEqual({ strategy: 'least-request', routesEngine: 'clutch-layers' });
  await expect(page.getByTestId('routing-profile-value')).toHaveText('clutch-layers', { timeout: 15_000 });
  await expect(pill).toHaveText('engine in sync', { timeout: 15_000 });
  await expect(profile).toHaveValue('');
  await expect(profile.locator('option:checked')).toHaveText('clutch-layers');
  await expect(page.getByTestId('metric-profile-in-force')).toHaveText('clutch-layers');

  // The control shows clutch-layers now, yet an untouched control sends no routesEngine: a strategy change is the strategy only.
  for (const strategy of ['round-robin', 'least-request']) {
    await page.getByTestId(`strategy-${strategy}`).click();
    const [p] = await Promise.all([
      page.waitForRequest((r) => r.url().endsWith('/runtime.setRouting')),
      page.getByTestId('routing-apply').click(),
    ]);
    expect(p.postDataJSON()).toEqual({ strategy });
    await expect(page.getByTestId('routing-effective-value')).toHaveText(strategy, { timeout: 15_000 });
    await expect(profile.locator('option:checked')).toHaveText('clutch-layers');
  }

  const view = await (
    await request.get(`${node.url}/router/v1/console/runtime.routing`, { headers: auth(node) })
  ).json();
  expect(view.desired).toEqual({ strategy: 'least-request', routes_engine: 'clutch-layers' });
  await page.screenshot({ path: shot('runtime-routing'), fullPage: true });
});

test('an invalid multi spec shows the exact message on Apply and publishes nothing', async ({ page, request }) => {
  await openRuntime(page, node);
  await expect(page.getByTestId('routing-pill')).toHaveText('engine in sync');
  const view = await (
    await request.get(`${node.url}/router/v1/console/runtime.routing`, { headers: auth(node) })
  ).json();
  const before = view.desired;
  const posts: string[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST') posts.push(r.url());
  });

  const spec = page.getByTestId('multi-spec');
  const error = page.getByTestId('routing-apply-error');
  const cases: [string, string][] = [
    ['multi:least-request:3,,least-kv-cache:1', 'Remove the empty entry and separate pairs with single commas.'],
    ['multi:', 'Enter at least one name:weight pair.'],
    ['multi:least-request', '"least-request" is not a name:weight pair (for example least-request:3).'],
    [
      'multi:random:1',
      `"random" is not weightable. Weightable scorers: ${(view.multiScorers as string[]).join(', ')}.`,
    ],
    ['multi:least-request:0', 'The weight of "least-request" must be a number above zero.'],
  ];
  await page.getByTestId('strategy-multi').click();
  for (const [text, message] of cases) {
    await spec.fill(text);
    await expect(spec).not.toHaveAttribute('aria-invalid', 'true');
    await page.getByTestId('routing-apply').click();
    await expect(error).toHaveText(message);
    await expect(spec).toHaveAttribute('aria-invalid', 'true');
  }
  await page.screenshot({ path: shot('runtime-invalid'), fullPage: true });
  expect(posts).toEqual([]);
  const after = await (
    await request.get(`${node.url}/router/v1/console/runtime.routing`, { headers: auth(node) })
  ).json();
  expect(after.desired).toEqual(before);

  // Reset discards the draft: back to what is in force, no message.
  await page.getByTestId('routing-reset').click();
  await expect(error).toHaveCount(0);
  await expect(page.getByTestId('strategy-least-request')).toHaveAttribute('aria-pressed', 'true');
  await expect(spec).toHaveValue('multi:least-request:3,least-kv-cache:1');
});

test('a deployment with routing writes off is read-only: controls disabled, the gate named, reads still work', async ({
  page,
  request,
}) => {
  await publishedBlob(request, readOnly);
  await openRuntime(page, readOnly);
  await expect(page.getByTestId('routing-readonly')).toHaveText('Read-only on this deployment');
  await expect(page.getByTestId('routing-effective-value')).toHaveText('round-robin');
  await expect(page.getByTestId('routing-pill')).toHaveText('engine in sync');

  const buttons = page.locator('[data-testid^="strategy-"]');
  await expect(buttons).toHaveCount(6);
  for (const b of await buttons.all()) await expect(b).toBeDisabled();
  await expect(page.getByTestId('multi-spec')).toBeDisabled();
  await expect(page.getByTestId('metric-profile')).toBeDisabled();
  await expect(page.getByTestId('routing-apply')).toBeDisabled();
  await expect(page.getByTestId('routing-reset')).toBeDisabled();
  await expect(page.getByTestId('routing-apply')).toHaveAttribute('title', /console\.routing_writes_enabled/);
  await expect(page.getByRole('button', { name: /restart/i })).toHaveCount(0);
  // Reads keep working: what each strategy needs is still shown.
  await expect(page.getByTestId('requires-hint')).toContainText('Needs no scraped metrics');
  await expect(page.getByTestId('runtime-banner')).toBeVisible();

  const refused = await request.post(`${readOnly.url}/router/v1/console/runtime.setRouting`, {
    headers: auth(readOnly),
    data: { strategy: 'least-request' },
  });
  expect(refused.status()).toBe(403);
  await page.screenshot({ path: shot('runtime-readonly'), fullPage: true });
});

test('ROUTE-8 by the seed’s names: INFERENCE_DEPLOY_ENABLED=false wins over the config and is the gate named', async ({
  page,
  request,
}) => {
  await openRuntime(page, envReadOnly);
  await expect(page.getByTestId('routing-readonly')).toHaveText('Read-only on this deployment');
  await expect(page.getByTestId('routing-readonly-gate')).toHaveText('gate: INFERENCE_DEPLOY_ENABLED');
  await expect(page.getByTestId('routing-apply')).toBeDisabled();
  await expect(page.getByTestId('routing-apply')).toHaveAttribute(
    'title',
    'Routing writes are turned off on this deployment (INFERENCE_DEPLOY_ENABLED is false).',
  );
  await expect(page.getByTestId('metric-profile')).toBeDisabled();
  await expect(page.getByTestId('routing-effective-value')).toHaveText('round-robin');
  const refused = await request.post(`${envReadOnly.url}/router/v1/console/runtime.setRouting`, {
    headers: auth(envReadOnly),
    data: { strategy: 'least-request' },
  });
  expect(refused.status()).toBe(403);
  expect((await refused.json()).error).toMatchObject({ code: 'routing_read_only', param: 'INFERENCE_DEPLOY_ENABLED' });
  await page.screenshot({ path: shot('runtime-env-readonly'), fullPage: true });
});

test('ROUTE-8: INFERENCE_ADMIN_EMAILS names the operators; another account is read-only, the operator’s token writes', async ({
  page,
  request,
}) => {
  await openRuntime(page, envOperators);
  await expect(page.getByTestId('routing-readonly')).toHaveText('Read-only for your account');
  await expect(page.getByTestId('routing-readonly-gate')).toHaveText('gate: INFERENCE_ADMIN_EMAILS');
  await expect(page.getByTestId('routing-apply')).toHaveAttribute(
    'title',
    'Only operators (INFERENCE_ADMIN_EMAILS) can change routing.',
  );
  await expect(page.getByTestId('strategy-least-request')).toBeDisabled();

  // The operator opens the console with their own token: writable, and the write goes through.
  await openRuntime(page, envOperators, OPERATOR_TOKEN);
  await expect(page.getByTestId('routing-readonly')).toHaveCount(0);
  await page.getByTestId('strategy-least-request').click();
  const [post] = await Promise.all([
    page.waitForRequest((r) => r.url().endsWith('/runtime.setRouting')),
    page.getByTestId('routing-apply').click(),
  ]);
  expect(post.postDataJSON()).toEqual({ strategy: 'least-request' });
  await expect(page.getByTestId('routing-effective-value')).toHaveText('least-request', { timeout: 15_000 });
  const view = await (
    await request.get(`${envOperators.url}/router/v1/console/runtime.routing`, {
      headers: { Authorization: `Bearer ${OPERATOR_TOKEN}` },
    })
  ).json();
  expect(view).toMatchObject({
    canWrite: true,
    gate: { deployment: 'console.routing_writes_enabled', operators: 'INFERENCE_ADMIN_EMAILS' },
  });
});

test('states a healthy node does not produce (answers replaced in the browser): no blob, no beacon', async ({
  page,
  request,
}) => {
  // The node always publishes a blob and a beacon; the engine of the seed may do neither. Replace the two reads.
  const real = await (
    await request.get(`${node.url}/router/v1/console/runtime.routing`, { headers: auth(node) })
  ).json();
  real.desired ??= { strategy: 'least-request', routes_engine: null }; // when run on its own
  await page.route('**/router/v1/console/runtime.health', (route) => route.fulfill({ json: { published: false } }));
  await page.route('**/router/v1/console/runtime.routing', (route) =>
    route.fulfill({ json: { ...real, effective: null, engineReporting: false, inSync: false } }),
  );
  await openRuntime(page, node);
  await expect(page.getByTestId('runtime-not-published')).toContainText('The engine publishes no runtime stats');
  for (const id of ['runtime-banner', 'gauge-gpu', 'gauge-cpu', 'gauge-memory', 'self-tests', 'serving-config'])
    await expect(page.getByTestId(id)).toHaveCount(0);
  await expect(page.getByTestId('routing-pill')).toHaveText('engine not reporting');
  await expect(page.getByTestId('routing-not-reporting')).toContainText(`${real.routingKey}.effective`);
  await expect(page.getByTestId('routing-not-reporting')).toContainText('stored as desired state');
  await expect(page.getByTestId('routing-effective-value')).toHaveText('—');
  await expect(page.getByTestId('routing-desired-value')).toHaveText(real.desired.strategy);
  // The picker falls back to what was requested.
  await expect(page.getByTestId(`strategy-${real.desired.strategy}`)).toHaveAttribute('aria-pressed', 'true');
  await page.screenshot({ path: shot('runtime-unpublished'), fullPage: true });
});

test('RT-2: one malformed self-test field shows — and the rest of the blob still shows (answer replaced in the browser)', async ({
  page,
  request,
}) => {
  const blob = await publishedBlob(request, node);
  const tests = [
    { name: 'store writable', detail: 'ok', ms: 2, status: 'pass' },
    { name: 'gpu visible', detail: 'no device' },
    { name: 'odd', status: 'warn' },
  ];
  await page.route('**/router/v1/console/runtime.health', (route) =>
    route.fulfill({
      json: {
        published: true,
        blob: { ...blob, selfTests: tests },
        malformed: ['selfTests.1.status', 'selfTests.1.ms'],
      },
    }),
  );
  await openRuntime(page, node);
  await expect(page.getByTestId('runtime-malformed')).toHaveText(
    'The published blob has malformed fields, shown as —: selfTests.1.status, selfTests.1.ms.',
  );
  await expect(page.getByTestId('banner-host')).toHaveText(blob.host!);
  const rows = page.getByTestId('self-test');
  await expect(rows).toHaveCount(3);
  await expect(rows.nth(1).getByTestId('self-test-status')).toHaveText('—');
  await expect(rows.nth(2).getByTestId('self-test-status')).toHaveText('warn');
  await expect(page.getByTestId('runtime-not-published')).toHaveCount(0);
});

test('ASSET-1: runs kept in the node’s store are listed on Runtime, each ratio beside the previous run’s', async ({
  page,
}) => {
  // Written the way `routerdesk bench --store` writes them, into the running node's store (router.db, WAL).
  const db = openStore(join(node.dir, 'store'));
  const machine = {
    hostname: 'bench-box',
    platform: 'linux',
    arch: 'x64',
    node: process.version,
    cores: 2,
    cpu: 'test cpu',
    memoryBytes: 2 ** 33,
  };
  const run = (at: number, ratio: number) => ({
    startedAt: at,
    finishedAt: at + 2_000,
    version: '0.0.1-e2e',
    quick: true,
    benchmarks: ['planner-scale'],
    failed: [],
    machine,
    summary: [
      {
        benchmark: 'planner-scale',
        measure: 'µs per decision, 200 nodes / 600 links',
        value: '1,000',
        ratio,
        against: 'µs per link at 2 nodes',
      },
    ],
    rows: [{ benchmark: 'planner-scale', scenario: '2 nodes', decisionsPerSecond: 10_000 }],
  });
  try {
    new BenchStore(db).record(run(Date.UTC(2025, 0, 1), 1.2));
    new BenchStore(db).record(run(Date.UTC(2025, 0, 2), 1.5));
  } finally {
    db.close();
  }
  await openRuntime(page, node);
  const runs = page.getByTestId('bench-run');
  await expect(runs).toHaveCount(2);
  await expect(runs.first().getByTestId('bench-run-version')).toHaveText('0.0.1-e2e');
  await expect(runs.first().getByTestId('bench-run-machine')).toContainText('bench-box · 2 cores · test cpu');
  await expect(runs.first().getByTestId('bench-line-ratio')).toHaveText('1.50×');
  await expect(runs.first().getByTestId('bench-line-change')).toHaveText('+25%');
  await expect(runs.nth(1).getByTestId('bench-line-change')).toHaveText('—');
  await page.getByTestId('bench-runs').screenshot({ path: shot('runtime-bench-runs') });
});

test('navigation between Models and Runtime', async ({ page }) => {
  await openRuntime(page, node);
  await page.getByTestId('nav-models').click();
  await expect(page.getByTestId('models-page')).toBeVisible();
  await expect(page.getByTestId('nav-models')).toHaveAttribute('aria-current', 'page');
  await page.goBack();
  await expect(page.getByTestId('runtime-page')).toBeVisible();
});

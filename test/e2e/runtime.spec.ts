import { fileURLToPath } from 'node:url';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { startRouterNode, type RouterNode } from './harness/router-node';

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

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  [node, readOnly] = await Promise.all([
    startRouterNode({ nodeId: 'e2e-runtime', models: [SIM_CHAT], extraYaml: ROUTING_YAML }),
    startRouterNode({ nodeId: 'e2e-readonly', models: [SIM_CHAT], consoleLines: ['routing_writes_enabled: false'], extraYaml: 'routing:\n  poll_interval: 300ms' }),
  ]);
});

test.afterAll(async () => {
  await Promise.all([node?.stop(), readOnly?.stop()]);
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

async function openRuntime(page: Page, n: RouterNode) {
  await page.goto(`${n.url}/?token=${n.consoleToken}`);
  await expect(page.getByTestId('models-page')).toBeVisible();
  await page.getByTestId('nav-runtime').click();
  await expect(page.getByTestId('runtime-page')).toBeVisible();
  await expect(page.getByTestId('nav-runtime')).toHaveAttribute('aria-current', 'page');
}

test('banner, gauges and self-tests show the published blob; absent fields are — and never NaN', async ({ page, request }) => {
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
    for (const row of ['vram', 'temperature', 'power']) await expect(page.getByTestId(`gauge-gpu-${row}-value`)).toHaveText('—');
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
  const chat = await request.post(`${node.url}/v1/chat/completions`, { data: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 } });
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

test('routing: least-request applied reaches engine in sync; routesEngine only when a profile is picked', async ({ page, request }) => {
  await openRuntime(page, node);
  const pill = page.getByTestId('routing-pill');
  await expect(pill).toHaveText('engine in sync');
  await expect(page.getByTestId('routing-effective-value')).toHaveText('round-robin');
  await expect(page.getByTestId('routing-desired-value')).toHaveText('— (module default)');
  await expect(page.getByTestId('strategy-round-robin')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('routing-apply')).toBeDisabled();
  await expect(page.getByTestId('multi-spec')).toHaveValue('multi:least-request:3,least-kv-cache:1');

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
  const [post] = await Promise.all([page.waitForRequest((r) => r.url().endsWith('/runtime.setRouting')), page.getByTestId('routing-apply').click()]);
  expect(post.postDataJSON()).toEqual({ strategy: 'least-request' });

  await expect(pill).toHaveText('engine in sync', { timeout: 15_000 });
  await expect(page.getByTestId('routing-desired-value')).toHaveText('least-request');
  await expect(page.getByTestId('routing-effective-value')).toHaveText('least-request');
  await expect(page.getByTestId('routing-source-value')).toHaveText('routing key');
  await expect(page.getByTestId('strategy-least-request')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('routing-apply')).toBeDisabled();

  // Picking the profile is a change of its own, and the only way routesEngine goes out.
  await page.getByTestId('metric-profile').selectOption('clutch-layers');
  const [post2] = await Promise.all([page.waitForRequest((r) => r.url().endsWith('/runtime.setRouting')), page.getByTestId('routing-apply').click()]);
  expect(post2.postDataJSON()).toEqual({ strategy: 'least-request', routesEngine: 'clutch-layers' });
  await expect(page.getByTestId('routing-profile-value')).toHaveText('clutch-layers', { timeout: 15_000 });
  await expect(pill).toHaveText('engine in sync', { timeout: 15_000 });
  await expect(page.getByTestId('metric-profile')).toHaveValue('');

  const view = await (await request.get(`${node.url}/router/v1/console/runtime.routing`, { headers: auth(node) })).json();
  expect(view.desired).toEqual({ strategy: 'least-request', routes_engine: 'clutch-layers' });
  await page.screenshot({ path: shot('runtime-routing'), fullPage: true });
});

test('an invalid multi spec shows the exact message on Apply and publishes nothing', async ({ page, request }) => {
  await openRuntime(page, node);
  await expect(page.getByTestId('routing-pill')).toHaveText('engine in sync');
  const view = await (await request.get(`${node.url}/router/v1/console/runtime.routing`, { headers: auth(node) })).json();
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
    ['multi:random:1', `"random" is not weightable. Weightable scorers: ${(view.multiScorers as string[]).join(', ')}.`],
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
  const after = await (await request.get(`${node.url}/router/v1/console/runtime.routing`, { headers: auth(node) })).json();
  expect(after.desired).toEqual(before);

  // Reset discards the draft: back to what is in force, no message.
  await page.getByTestId('routing-reset').click();
  await expect(error).toHaveCount(0);
  await expect(page.getByTestId('strategy-least-request')).toHaveAttribute('aria-pressed', 'true');
  await expect(spec).toHaveValue('multi:least-request:3,least-kv-cache:1');
});

test('a deployment with routing writes off is read-only: controls disabled, the gate named, reads still work', async ({ page, request }) => {
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

  const refused = await request.post(`${readOnly.url}/router/v1/console/runtime.setRouting`, { headers: auth(readOnly), data: { strategy: 'least-request' } });
  expect(refused.status()).toBe(403);
  await page.screenshot({ path: shot('runtime-readonly'), fullPage: true });
});

test('states a healthy node does not produce (answers replaced in the browser): no blob, no beacon', async ({ page, request }) => {
  // The node always publishes a blob and a beacon; the engine of the seed may do neither. Replace the two reads.
  const real = await (await request.get(`${node.url}/router/v1/console/runtime.routing`, { headers: auth(node) })).json();
  real.desired ??= { strategy: 'least-request', routes_engine: null }; // when run on its own
  await page.route('**/router/v1/console/runtime.health', (route) => route.fulfill({ json: { published: false } }));
  await page.route('**/router/v1/console/runtime.routing', (route) =>
    route.fulfill({ json: { ...real, effective: null, engineReporting: false, inSync: false } }),
  );
  await openRuntime(page, node);
  await expect(page.getByTestId('runtime-not-published')).toContainText('The engine publishes no runtime stats');
  for (const id of ['runtime-banner', 'gauge-gpu', 'gauge-cpu', 'gauge-memory', 'self-tests', 'serving-config']) await expect(page.getByTestId(id)).toHaveCount(0);
  await expect(page.getByTestId('routing-pill')).toHaveText('engine not reporting');
  await expect(page.getByTestId('routing-not-reporting')).toContainText(`${real.routingKey}.effective`);
  await expect(page.getByTestId('routing-not-reporting')).toContainText('stored as desired state');
  await expect(page.getByTestId('routing-effective-value')).toHaveText('—');
  await expect(page.getByTestId('routing-desired-value')).toHaveText(real.desired.strategy);
  // The picker falls back to what was requested.
  await expect(page.getByTestId(`strategy-${real.desired.strategy}`)).toHaveAttribute('aria-pressed', 'true');
  await page.screenshot({ path: shot('runtime-unpublished'), fullPage: true });
});

test('navigation between Models and Runtime', async ({ page }) => {
  await openRuntime(page, node);
  await page.getByTestId('nav-models').click();
  await expect(page.getByTestId('models-page')).toBeVisible();
  await expect(page.getByTestId('nav-models')).toHaveAttribute('aria-current', 'page');
  await page.goBack();
  await expect(page.getByTestId('runtime-page')).toBeVisible();
});

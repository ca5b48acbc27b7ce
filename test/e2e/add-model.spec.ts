import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, type Page, test } from '@playwright/test';
import OpenAI from 'openai';
import { CLI, type RouterNode, startRouterNode } from './harness/router-node';

/**
 * Models from the app: a GGUF generated with `make-model` is added from the Add model dialog (found through the
 * file browser, backend the built-in llama-node), answers a real OpenAI client without a restart, gets a new context
 * size through Edit, and is removed; a wrong path is shown at the model file field and nothing is written.
 */

const shot = (name: string) => fileURLToPath(new URL(`../../test-results/${name}.png`, import.meta.url));

let node: RouterNode;
let ggufs: string;
let area: string;

test.beforeAll(async () => {
  area = realpathSync(mkdtempSync(join(tmpdir(), 'routerdesk-e2e-ggufs-')));
  ggufs = join(area, 'ggufs');
  mkdirSync(ggufs);
  execFileSync(process.execPath, [
    CLI,
    'make-model',
    join(ggufs, 'tiny-chat.gguf'),
    '--embd',
    '64',
    '--layers',
    '2',
    '--seed',
    '3',
  ]);
  node = await startRouterNode({ nodeId: 'e2e-add-model', models: [], modelsLines: [`browse_dirs: [${ggufs}]`] });
});

test.afterAll(async () => {
  await node?.stop();
  rmSync(area, { recursive: true, force: true });
});

const row = (page: Page, id: string) => page.locator(`[data-testid="model-row"][data-model-id="${id}"]`);

test('add a model from the dialog, chat with it, change its context size, remove it', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto(`${node.url}/?token=${node.consoleToken}`);
  await expect(page.getByTestId('models-empty')).toBeVisible();
  await page.getByTestId('add-model').click();
  const dialog = page.getByTestId('model-dialog');
  await expect(dialog).toBeVisible();
  // No native dialog in a plain browser.
  await expect(dialog.getByTestId('model-native-pick')).toHaveCount(0);

  // The browser starts at the folders the node may read; the GGUF folder leads to the file.
  await dialog.getByTestId('model-browse').click();
  await dialog.locator(`[data-testid="model-browse-entry"][data-name="${ggufs}"]`).click();
  await expect(dialog.getByTestId('model-browse-dir')).toHaveText(ggufs);
  await dialog.locator('[data-testid="model-browse-entry"][data-name="tiny-chat.gguf"]').click();
  await expect(dialog.getByTestId('model-path')).toHaveValue(join(ggufs, 'tiny-chat.gguf'));
  await expect(dialog.getByTestId('model-inspection')).toContainText('architecture llama');
  // The name comes from the file, the capabilities from the header.
  await expect(dialog.getByTestId('model-name')).toHaveValue('tiny-chat');
  await expect(dialog.getByTestId('model-capability-text')).toBeChecked();
  await expect(dialog.getByTestId('model-capability-embedding')).not.toBeChecked();
  await expect(dialog.getByTestId('model-backend-select')).toHaveValue('llama-node');
  await dialog.getByTestId('model-name').fill('e2e-tiny');
  await expect(dialog.getByTestId('model-name-advice')).toHaveAttribute('data-kind', 'new');
  await dialog.getByTestId('model-contextsize').fill('512');
  await dialog.getByTestId('model-parallel').fill('1');
  await page.screenshot({ path: shot('add-model-dialog'), fullPage: true });
  await dialog.getByTestId('model-dialog-submit').click();
  await expect(dialog).toHaveCount(0);

  // Taken in without a restart: the row, then a real OpenAI client's answer.
  await expect(row(page, 'e2e-tiny')).toBeVisible();
  await expect(row(page, 'e2e-tiny').getByTestId('model-backend')).toHaveText('llama-node');
  await expect(row(page, 'e2e-tiny').getByTestId('model-context')).toContainText('512');
  const openai = new OpenAI({ baseURL: `${node.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
  const chat = await openai.chat.completions.create({
    model: 'e2e-tiny',
    messages: [{ role: 'user', content: 'hello' }],
    max_tokens: 4,
    temperature: 0,
  });
  expect(chat.model).toBe('e2e-tiny');
  expect(chat.choices[0].message.role).toBe('assistant');
  expect(chat.usage?.completion_tokens).toBeGreaterThan(0);

  // Edit: the same dialog on the stored config; a new context size reaches the model.
  await row(page, 'e2e-tiny').getByTestId('model-edit').click();
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId('model-contextsize')).toHaveValue('512');
  await expect(dialog.getByTestId('model-name')).toHaveValue('e2e-tiny');
  await dialog.getByTestId('model-contextsize').fill('256');
  await dialog.getByTestId('model-dialog-submit').click();
  await expect(dialog).toHaveCount(0);
  await expect(row(page, 'e2e-tiny').getByTestId('model-context')).toContainText('256');
  const again = await openai.chat.completions.create({
    model: 'e2e-tiny',
    messages: [{ role: 'user', content: 'hello again' }],
    max_tokens: 2,
    temperature: 0,
  });
  expect(again.choices[0].message.role).toBe('assistant');

  // Remove: confirmed, naming the links that use it (none here); the model is gone and refused.
  await row(page, 'e2e-tiny').getByTestId('model-remove').click();
  const confirm = page.getByTestId('remove-model-dialog');
  await expect(confirm.getByTestId('remove-model-no-links')).toBeVisible();
  await confirm.getByTestId('remove-model-confirm').click();
  await expect(confirm).toHaveCount(0);
  await expect(row(page, 'e2e-tiny')).toHaveCount(0);
  await expect(page.getByTestId('models-empty')).toBeVisible();
  const gone = await openai.chat.completions
    .create({ model: 'e2e-tiny', messages: [{ role: 'user', content: 'x' }], max_tokens: 1 })
    .catch((e: unknown) => e);
  expect(gone).toBeInstanceOf(OpenAI.APIError);
  expect((gone as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
  expect(readdirSync(join(node.dir, 'models'))).toEqual([]);
});

test('a wrong path is shown at the model file field and nothing is written', async ({ page }) => {
  await page.goto(`${node.url}/?token=${node.consoleToken}`);
  await page.getByTestId('add-model').click();
  const dialog = page.getByTestId('model-dialog');
  const missing = join(ggufs, 'no-such-model.gguf');
  await dialog.getByTestId('model-path').fill(missing);
  await dialog.getByTestId('model-name').fill('wrong-path');
  // Leaving the field reads the header: nothing there.
  await expect(dialog.getByTestId('model-path-error')).toContainText('nothing at');
  // Sent anyway: the node's 400 names config.model, shown at the same field.
  await dialog.getByTestId('model-dialog-submit').click();
  await expect(dialog.getByTestId('model-path-error')).toContainText('does not exist');
  await expect(dialog.getByTestId('model-path')).toHaveAttribute('aria-invalid', 'true');
  await expect(dialog.getByTestId('model-dialog-error')).toHaveCount(0);
  await page.screenshot({ path: shot('add-model-wrong-path'), fullPage: true });
  expect(readdirSync(join(node.dir, 'models'))).toEqual([]);

  // A file outside the folders the node may browse: its header is not read (said, naming the setting), and the
  // node's own check of the config still decides.
  await dialog.getByTestId('model-path').fill('/etc/no-such-model.gguf');
  await dialog.getByTestId('model-name').click();
  await expect(dialog.getByTestId('model-path-note')).toContainText('models.browse_dirs');
  await expect(dialog.getByTestId('model-path-error')).toHaveCount(0);
  await dialog.getByTestId('model-dialog-submit').click();
  await expect(dialog.getByTestId('model-path-error')).toContainText('does not exist');
  expect(readdirSync(join(node.dir, 'models'))).toEqual([]);
  await dialog.getByTestId('model-dialog-cancel').click();
  await expect(dialog).toHaveCount(0);
});

test('engine discovery: the Runtime screen lists each engine with where it was found or why not; the dialog offers them', async ({
  page,
  request,
}) => {
  const api = await request.get(`${node.url}/router/v1/console/engines`, {
    headers: { Authorization: `Bearer ${node.consoleToken}` },
  });
  const { engines } = (await api.json()) as {
    engines: { family: string; available: boolean; reason: string | null }[];
  };
  await page.goto(`${node.url}/?token=${node.consoleToken}#runtime`);
  const card = page.getByTestId('engines-card');
  await expect(card.getByTestId('engine-row')).toHaveCount(engines.length);
  await expect(card.locator('[data-family="llama-node"]').getByTestId('engine-found-in')).toHaveText('built in');
  for (const e of engines.filter((x) => !x.available)) {
    await expect(card.locator(`[data-family="${e.family}"]`).getByTestId('engine-reason')).toContainText(e.reason!);
  }
  await page.screenshot({ path: shot('runtime-engines'), fullPage: true });

  await page.goto(`${node.url}/?token=${node.consoleToken}#models`);
  await page.getByTestId('add-model').click();
  const select = page.getByTestId('model-dialog').getByTestId('model-backend-select');
  for (const e of engines.filter((x) => x.family !== 'sim')) {
    const option = select.locator(`option[value="${e.family}"]`);
    if (e.available) await expect(option).toBeEnabled();
    else await expect(option).toBeDisabled();
  }
  const missing = engines.filter((x) => !x.available && x.family !== 'sim');
  if (missing.length) await expect(page.getByTestId('model-backend-missing')).toContainText(missing[0].reason!);
});

test('a config file written by hand that does not validate is shown with its field; removing it clears the notice', async ({
  page,
}) => {
  await page.goto(`${node.url}/?token=${node.consoleToken}`);
  await expect(page.getByTestId('models-empty')).toBeVisible();
  const file = join(node.dir, 'models', 'broken.yaml');
  writeFileSync(file, `name: broken\nbackend: llama-node\nmodel: ${join(ggufs, 'tiny-chat.gguf')}\ncontextsize: -1\n`);
  const notice = page.locator('[data-testid="model-config-error"][data-file$="broken.yaml"]');
  await expect(notice).toContainText('contextsize');
  await page.screenshot({ path: shot('model-config-error'), fullPage: true });
  rmSync(file);
  await expect(page.getByTestId('model-config-errors')).toHaveCount(0);
});

test('a folder added on the Settings screen (Model folders) can be browsed in the dialog after the restart', async ({
  page,
}) => {
  test.setTimeout(90_000);
  const more = join(area, 'more-models');
  mkdirSync(more);
  execFileSync(process.execPath, [
    CLI,
    'make-model',
    join(more, 'second.gguf'),
    '--embd',
    '64',
    '--layers',
    '1',
    '--seed',
    '4',
  ]);
  await page.goto(`${node.url}/?token=${node.consoleToken}#settings`);
  const dirs = page.getByTestId('settings-field-models.browse_dirs');
  await expect(dirs).toHaveValue(ggufs);
  await dirs.fill(`${ggufs}\n${more}`);
  await page.getByTestId('settings-save').click();
  await expect(page.getByTestId('settings-restarted')).toBeVisible({ timeout: 30_000 });
  await expect(dirs).toHaveValue(`${ggufs}\n${more}`);

  await page.goto(`${node.url}/?token=${node.consoleToken}#models`);
  await page.getByTestId('add-model').click();
  const dialog = page.getByTestId('model-dialog');
  await dialog.getByTestId('model-browse').click();
  await dialog.locator(`[data-testid="model-browse-entry"][data-name="${more}"]`).click();
  await dialog.locator('[data-testid="model-browse-entry"][data-name="second.gguf"]').click();
  await expect(dialog.getByTestId('model-name')).toHaveValue('second');
  await expect(dialog.getByTestId('model-inspection')).toContainText('architecture llama');
});

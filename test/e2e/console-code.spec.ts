import { expect, type Page, test } from '@playwright/test';
import { healthAnswerSchema } from '../../src-router/contract';
import { runCli } from '../support/node-harness';
import { linkPageOf, type ServedWithBrowser, serveWithBrowser } from '../support/serve-with-browser';
import { freePort } from './harness/router-node';

/**
 * `routerdesk serve`'s way into the console: the browser is started on an owner-only page holding a one-time code
 * (issue #37 item 1: no secret on any command line); a page that has no token or a refused one says so and names the
 * ways back in, and `routerdesk console-link` gets it back in without a restart; a Settings save that moves the node
 * to another port takes the page along (issue #40 item 1).
 */

let served: ServedWithBrowser;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  served = await serveWithBrowser();
});

test.afterAll(async () => {
  await served?.stop();
});

const startedAt = async (url: string) =>
  healthAnswerSchema.parse(await (await fetch(`${url}/health`)).json()).started_at;

/** A fresh one-time link from `routerdesk console-link --dir` (no terminal of serve's needed). */
async function consoleLink(): Promise<string> {
  const run = await runCli(['console-link', '--dir', served.serveDir]);
  expect(run.code, run.stderr).toBe(0);
  return run.stdout.split('\n')[0];
}

async function expectLockedOut(page: Page, pill: string) {
  await expect(page.getByTestId('connection-status')).toHaveText(pill);
  await expect(page.getByTestId('access-help')).toContainText('routerdesk console-link --dir FOLDER');
  await expect(page.getByTestId('access-help')).toContainText('press Enter for a new link');
  await expect(page.getByTestId('access-help')).not.toContainText('?token=');
  await expect(page.getByTestId('model-row')).toHaveCount(0);
}

test('the page serve started the browser on lands on a working console, the code gone from the address bar', async ({
  page,
}) => {
  const opened = served.browserArgv[0];
  expect(opened).toMatch(/^file:\/\/.*open-console\.html$/);
  expect(linkPageOf(opened).origin).toBe(served.url);
  await page.goto(opened);
  await expect(page.getByTestId('connection-status')).toHaveText('online');
  await expect(page.getByTestId('node-role')).toHaveText('standalone');
  await expect(page.getByTestId('model-row')).toHaveCount(3);
  await expect(page.getByTestId('access-help')).toHaveCount(0);
  const address = new URL(page.url());
  expect(address.origin).toBe(served.url);
  expect(address.search).toBe('');
  // A reload keeps the tab's session (the token kept for this tab), not the spent code.
  await page.reload();
  await expect(page.getByTestId('connection-status')).toHaveText('online');
  await expect(page.getByTestId('model-row')).toHaveCount(3);
});

test('locked out (a spent link, a wrong token): the page says which, names the ways back in; console-link gets it in, no restart', async ({
  browser,
}) => {
  test.setTimeout(120_000); // two console-link runs, each a CLI start
  const before = await startedAt(served.url);
  // The spent page again, in a new tab: no token was sent.
  const page = await (await browser.newContext()).newPage();
  await page.goto(served.browserArgv[0]);
  await expectLockedOut(page, 'no token sent');
  await expect(page.getByTestId('models-error')).toContainText('no console token');
  expect(new URL(page.url()).search).toBe('');
  await page.goto(await consoleLink());
  await expect(page.getByTestId('connection-status')).toHaveText('online');
  await expect(page.getByTestId('model-row')).toHaveCount(3);
  await expect(page.getByTestId('access-help')).toHaveCount(0);

  // A token the node refuses: said as such, and the same way back in.
  const other = await (await browser.newContext()).newPage();
  await other.goto(`${served.url}/?token=not-the-console-token-0123`);
  await expectLockedOut(other, 'token rejected');
  await other.goto(await consoleLink());
  await expect(other.getByTestId('connection-status')).toHaveText('online');
  // Nobody restarted the node for it.
  expect(await startedAt(served.url)).toBe(before);
});

test('a port change in Settings: the page follows the node to its new port and lands on a working console', async ({
  page,
}) => {
  test.setTimeout(120_000); // a restart of the node with its engines, and two console-link runs
  await page.goto(await consoleLink());
  await expect(page.getByTestId('connection-status')).toHaveText('online');
  await page.getByTestId('nav-settings').click();
  await expect(page.getByTestId('settings-form')).toBeVisible();
  const port = await freePort();
  await page.getByTestId('settings-field-server.port').fill(String(port));
  await page.getByTestId('settings-save').click();
  const moved = `http://127.0.0.1:${port}`;
  // No token typed, none shown: the page arrives there with a one-time code, exchanged and dropped at once.
  await expect(page).toHaveURL(`${moved}/#settings`, { timeout: 40_000 });
  await expect(page.getByTestId('connection-status')).toHaveText('online');
  await expect(page.getByTestId('settings-form')).toBeVisible();
  await expect(page.getByTestId('settings-field-server.port')).toHaveValue(String(port));
  await page.getByTestId('nav-models').click();
  await expect(page.getByTestId('model-row')).toHaveCount(3);
  // The old address no longer serves the console; console-link knows the new one.
  const link = new URL(await consoleLink());
  expect(link.origin).toBe(moved);
});

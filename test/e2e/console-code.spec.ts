import { expect, test } from '@playwright/test';
import { type ServedWithBrowser, serveWithBrowser } from '../support/serve-with-browser';

/** `routerdesk serve`'s browser link: a one-time code (item 7: no console token on the browser command line). */

let served: ServedWithBrowser;

test.beforeAll(async () => {
  served = await serveWithBrowser();
});

test.afterAll(async () => {
  await served?.stop();
});

test('item 7: the code link serve opened lands on a working console, the code gone from the address bar', async ({
  page,
}) => {
  const opened = served.browserArgv[0];
  expect(new URL(opened).searchParams.has('code')).toBe(true);
  await page.goto(`${opened}#models`);
  await expect(page.getByTestId('connection-status')).toHaveText('online');
  await expect(page.getByTestId('node-role')).toHaveText('standalone');
  await expect(page.getByTestId('model-row')).toHaveCount(3);
  const address = new URL(page.url());
  expect(address.search).toBe('');
  expect(address.hash).toBe('#models');
  // A reload keeps the tab's session (the token kept for this tab), not the spent code.
  await page.reload();
  await expect(page.getByTestId('connection-status')).toHaveText('online');
  await expect(page.getByTestId('model-row')).toHaveCount(3);
});

test('item 7: a spent code opened again in a new tab shows no console, with the way to a new link', async ({
  browser,
}) => {
  const page = await (await browser.newContext()).newPage();
  await page.goto(served.browserArgv[0]);
  await expect(page.getByTestId('models-error')).toContainText('no console token');
  expect(new URL(page.url()).search).toBe('');
});

import { fileURLToPath } from 'node:url';
import { expect, type Page, test } from '@playwright/test';
import { type LentCluster, startLentCluster } from './harness/lent-cluster';

/**
 * The Lending tab's what-if replay against a real cluster: a master and one slave as separate `routerdesk node`
 * processes with linked sim text models (the master's slow `a` lends to the slave's faster `b`), started cold — the
 * link first, then a burst that meets two unmeasured models, so its first lease is a probe (after 12 ×
 * `offload_probe_idle` of the slave's idleness: `b` must load) and the priced leases follow. The card replays the last
 * minutes as recorded, then with `offload_probe_idle` alone changed — an hour: the probe is never offered, so nothing
 * is lent and the burst takes longer —, then with the recorded link removed in the links editor.
 */

const shot = (name: string) => fileURLToPath(new URL(`../../test-results/${name}.png`, import.meta.url));

let c: LentCluster;
const openLending = (page: Page) => c.openLending(page);

test.beforeAll(async () => {
  test.setTimeout(60_000);
  c = await startLentCluster('e2e-replay-token-0123456789abc', { cold: true });
});

test.afterAll(async () => {
  await c?.stop();
});

test('Lending: a replay with only offload_probe_idle changed shows other numbers than the recorded ones; links are edited', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1400, height: 1000 });
  await openLending(page);
  const card = page.getByTestId('replay-card');
  await card.scrollIntoViewIfNeeded();
  const cell = (key: string, side: 'recorded' | 'replayed') =>
    card.locator(`[data-testid="replay-row"][data-key="${key}"] [data-testid="replay-${side}"]`);

  // As recorded: the burst was lent.
  await card.getByTestId('replay-range').selectOption(String(5 * 60_000));
  await card.getByTestId('replay-run').click();
  await expect(card.getByTestId('replay-table')).toBeVisible();
  await expect(card.getByTestId('replay-changed')).toHaveText('nothing (recorded settings)');
  await expect(card.getByTestId('replay-summary')).toContainText('gpu-b, master');
  await expect(cell('requests', 'recorded')).not.toHaveText('0');
  await expect(cell('lent', 'recorded')).not.toHaveText('0');
  const recorded = await card.getByTestId('replay-recorded').allTextContents();

  // Only the probe setting changed: an hour of idleness is never reached, the probe that opened the lending never
  // goes, the unloaded helper stays unpriced — nothing is lent and the burst takes longer.
  await card.getByTestId('replay-setting-offload_probe_idle').fill('1h');
  await card.getByTestId('replay-run').click();
  await expect(card.getByTestId('replay-changed')).toHaveText('offload_probe_idle=1h');
  await expect(cell('lent', 'replayed')).toHaveText('0');
  expect(await card.getByTestId('replay-recorded').allTextContents()).toEqual(recorded);
  await expect(card.locator('[data-testid="replay-row"][data-key="lent"]')).toHaveAttribute('data-differs', 'true');
  const burst = card.locator('[data-testid="replay-row"]').filter({ hasText: '(10 req)' });
  await expect(burst).toHaveAttribute('data-differs', 'true');
  const shownMs = (t: string | null) => (t!.endsWith(' s') ? parseFloat(t!) * 1000 : parseFloat(t!));
  const ms = async (side: 'recorded' | 'replayed') => shownMs(await burst.getByTestId(`replay-${side}`).textContent());
  expect(await ms('replayed')).toBeGreaterThan(await ms('recorded'));
  await card.screenshot({ path: shot('lending-replay') });

  // Links: the recorded link is listed; removed, the replay (recorded settings) lends nothing. A pick that cannot be a
  // link (both ends on the master) is named by its field before anything is asked.
  await card.getByTestId('replay-setting-offload_probe_idle').fill('');
  const link = card.getByTestId('replay-link');
  await expect(link).toHaveCount(1);
  await expect(link).toContainText('a on master → b on gpu-b');
  await expect(card.getByTestId('replay-links-state')).toHaveText('as recorded');
  await link.getByTestId('replay-link-remove').click();
  await expect(card.getByTestId('replay-links-none')).toBeVisible();
  await card.getByTestId('replay-run').click();
  await expect(card.getByTestId('replay-changed')).toHaveText('no links');
  await expect(card.getByTestId('replay-summary')).toContainText('0 links');
  await expect(cell('lent', 'replayed')).toHaveText('0');
  await card.getByTestId('replay-link-owner').selectOption('master/a');
  await card.getByTestId('replay-link-helper').selectOption('master/a');
  await card.getByTestId('replay-link-add').click();
  await expect(card.getByTestId('replay-error')).toContainText('another node');
  await expect(card.getByTestId('replay-link-helper')).toHaveAttribute('aria-invalid', 'true');
  await card.getByTestId('replay-link-helper').selectOption('gpu-b/b');
  await card.getByTestId('replay-link-add').click();
  await expect(card.getByTestId('replay-error')).toHaveCount(0);
  await expect(card.getByTestId('replay-links-state')).toHaveText('as recorded');

  // A value the node cannot take is named in the form before anything is asked.
  await card.getByTestId('replay-setting-scheduling_backend_depth').fill('two');
  await card.getByTestId('replay-run').click();
  await expect(card.getByTestId('replay-error')).toContainText('scheduling_backend_depth');
  await expect(card.getByTestId('replay-setting-scheduling_backend_depth')).toHaveAttribute('aria-invalid', 'true');
});

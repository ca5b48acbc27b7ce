import { fileURLToPath } from 'node:url';
import { expect, test, type Page } from '@playwright/test';
import { startLentCluster, type LentCluster } from './harness/lent-cluster';

/**
 * The Lending tab's what-if replay against a real cluster: a master and one slave as separate `routerdesk node`
 * processes with linked sim text models (the master's slow `a` lends to the slave's faster `b`). After a burst that
 * lends, the card replays the last minutes as recorded, then with `offload_probe_idle` changed, and shows recorded
 * and replayed side by side — the changed setting gives other numbers than the recorded ones.
 */

const shot = (name: string) => fileURLToPath(new URL(`../../test-results/${name}.png`, import.meta.url));

let c: LentCluster;
const openLending = (page: Page) => c.openLending(page);

test.beforeAll(async () => {
  test.setTimeout(60_000);
  c = await startLentCluster('e2e-replay-token-0123456789abc');
});

test.afterAll(async () => {
  await c?.stop();
});

test('Lending: a replay with offload_probe_idle changed shows other numbers than the recorded ones', async ({ page }) => {
  await page.setViewportSize({ width: 1400, height: 1000 });
  await openLending(page);
  const card = page.getByTestId('replay-card');
  await card.scrollIntoViewIfNeeded();
  const cell = (key: string, side: 'recorded' | 'replayed') => card.locator(`[data-testid="replay-row"][data-key="${key}"] [data-testid="replay-${side}"]`);

  // As recorded: the burst was lent.
  await card.getByTestId('replay-range').selectOption(String(5 * 60_000));
  await card.getByTestId('replay-run').click();
  await expect(card.getByTestId('replay-table')).toBeVisible();
  await expect(card.getByTestId('replay-changed')).toHaveText('nothing (recorded settings)');
  await expect(card.getByTestId('replay-summary')).toContainText('gpu-b, master');
  await expect(cell('requests', 'recorded')).not.toHaveText('0');
  await expect(cell('lent', 'recorded')).not.toHaveText('0');
  const recorded = await card.getByTestId('replay-recorded').allTextContents();

  // Probes an hour apart (and no fit for the helper yet counting): the replay lends nothing, the burst takes longer.
  await card.getByTestId('replay-setting-offload_probe_idle').fill('1h');
  await card.getByTestId('replay-setting-scheduling_min_samples').fill('1000');
  await card.getByTestId('replay-run').click();
  await expect(card.getByTestId('replay-changed')).toHaveText('offload_probe_idle=1h, scheduling_min_samples=1000');
  await expect(cell('lent', 'replayed')).toHaveText('0');
  expect(await card.getByTestId('replay-recorded').allTextContents()).toEqual(recorded);
  await expect(card.locator('[data-testid="replay-row"][data-key="lent"]')).toHaveAttribute('data-differs', 'true');
  // The burst of 10 (the warm-up requests are bursts of their own): it takes longer without lending.
  const burst = card.locator('[data-testid="replay-row"]').filter({ hasText: '(10 req)' });
  await expect(burst).toHaveAttribute('data-differs', 'true');
  const shownMs = (t: string | null) => (t!.endsWith(' s') ? parseFloat(t!) * 1000 : parseFloat(t!));
  const ms = async (side: 'recorded' | 'replayed') => shownMs(await burst.getByTestId(`replay-${side}`).textContent());
  expect(await ms('replayed')).toBeGreaterThan(await ms('recorded'));
  await card.screenshot({ path: shot('lending-replay') });

  // A value the node cannot take is named in the form before anything is asked.
  await card.getByTestId('replay-setting-scheduling_backend_depth').fill('two');
  await card.getByTestId('replay-run').click();
  await expect(card.getByTestId('replay-error')).toContainText('scheduling_backend_depth');
  await expect(card.getByTestId('replay-setting-scheduling_backend_depth')).toHaveAttribute('aria-invalid', 'true');
});

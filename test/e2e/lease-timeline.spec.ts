import { fileURLToPath } from 'node:url';
import { expect, type Page, test } from '@playwright/test';
import { timelinePageSchema } from '../../src-router/contract';
import { type LentCluster, startLentCluster } from './harness/lent-cluster';

/**
 * The Lending tab's lease timeline against a real cluster: a master and one slave as separate `routerdesk node`
 * processes with linked sim text models (the master's slow `a` lends to the slave's faster `b`). A burst to the
 * master produces a lease and lent requests; the timeline shows the lease, the lent requests and the borrowed jobs
 * on the slave's lane, and hovering the lease shows its decision row with every variable.
 */

const shot = (name: string) => fileURLToPath(new URL(`../../test-results/${name}.png`, import.meta.url));

let c: LentCluster;
const openLending = (page: Page) => c.openLending(page);

test.beforeAll(async () => {
  test.setTimeout(60_000);
  c = await startLentCluster('e2e-lease-timeline-token-01234');
  // The lent work is in the timeline rows too: the slave's borrowed jobs name their owner.
  await expect(async () => {
    const rows = timelinePageSchema.parse(await c.consoleCall('/router/v1/console/timeline'));
    expect(rows.nodes.find((n) => n.nodeId === 'gpu-b')?.requests.some((r) => r.lentFrom === 'master/a')).toBe(true);
  }).toPass({ timeout: 15_000, intervals: [100] });
});

test.afterAll(async () => {
  await c?.stop();
});

test('Lending: the timeline shows the lease, the lent requests and the borrowed jobs; hovering the lease shows its decision row', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1400, height: 1000 });
  await openLending(page);
  const card = page.getByTestId('timeline-card');
  await expect(card.getByTestId('timeline-canvas')).toBeVisible();
  const count = (kind: string) => card.getByTestId(`timeline-count-${kind}`);
  await expect(count('borrowed')).not.toHaveAttribute('data-count', '0');
  await expect(count('lent')).not.toHaveAttribute('data-count', '0');
  await expect(count('own')).not.toHaveAttribute('data-count', '0');
  const leases =
    Number(await count('lease').getAttribute('data-count')) + Number(await count('probe').getAttribute('data-count'));
  expect(leases).toBeGreaterThan(0);

  // The lease in the canvas's fallback list, hovered on the canvas at its place.
  const lease = card
    .locator('[data-testid="timeline-item"][data-kind="lease"], [data-testid="timeline-item"][data-kind="probe"]')
    .first();
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
  await page.mouse.move(
    box.x + Number(await lent.getAttribute('data-x')),
    box.y + Number(await lent.getAttribute('data-y')),
  );
  await expect(hover).toHaveAttribute('data-kind', /^(lent|grant|hold|returned)$/);
  await expect(variable('event')).toHaveText(/^(lent|granted|probe|held_for_helper|returned)$/);

  // Zoom: out then in (a zoomed viewport stays put while new rows arrive); "whole range" goes back to following them.
  const canvas = card.getByTestId('timeline-canvas');
  await card.getByTestId('timeline-zoom-out').click();
  await expect(card.getByTestId('timeline-zoom-reset')).toBeEnabled();
  const span = Number(await canvas.getAttribute('data-span-ms'));
  await card.getByTestId('timeline-zoom-in').click();
  await expect(async () =>
    expect(Math.abs(Number(await canvas.getAttribute('data-span-ms')) - span / 2)).toBeLessThanOrEqual(1),
  ).toPass({ timeout: 5_000, intervals: [50] });
  await card.getByTestId('timeline-zoom-reset').click();
  await expect(card.getByTestId('timeline-zoom-reset')).toBeDisabled();
});

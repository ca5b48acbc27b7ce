import { expect, type Page } from '@playwright/test';
import type { ModelConfigInput } from '../../../src-router/config';
import { decisionPageSchema, lendingViewSchema } from '../../../src-router/contract';
import { startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../../support/node-harness';
import { freePort } from './router-node';

/**
 * A cluster that has lent work, for the Lending tab's specs: a master and one slave as separate `routerdesk node`
 * processes with linked sim text models (the master's slow `a` lends to the slave's faster `b`); each model's own
 * fit first (`scheduling_min_samples` 2), then the link, applied on both ends, then a burst to the master that is
 * lent under a lease. `cold`: no warm-up — the link comes first and the burst meets two unmeasured models, so its
 * first lease is a probe (PROBE-1/2: nobody is priced yet; the slave's `b` must load, so it waits for 12 ×
 * `offload_probe_idle` of the slave's idleness) and the priced leases follow once the samples are in.
 */
export interface LentCluster {
  master: TestNode;
  slave: TestNode;
  /** Console API call on the master with the console token. */
  consoleCall<T>(path: string, init?: RequestInit): Promise<T>;
  /** Opens the master's console on the Lending tab. */
  openLending(page: Page): Promise<void>;
  stop(): Promise<void>;
}

const simText = (name: string, tokenTime: string): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['text'],
  contextsize: 4096,
  parallel: 1,
  sim: { load_time: '50ms', token_time: tokenTime },
});

const chat = (node: TestNode, model: string) =>
  fetch(`${node.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello there' }], max_tokens: 8 }),
  }).then((r) => r.status);

export async function startLentCluster(clusterToken: string, opts: { cold?: boolean } = {}): Promise<LentCluster> {
  const lending = {
    token: clusterToken,
    health_interval: '400ms',
    sync_interval: '400ms',
    scheduling_min_samples: 2,
    scheduling_refresh_interval: '400ms',
    offload_probe_idle: '300ms',
  };
  const [mp, sp] = [await freePort(), await freePort()];
  const [masterUrl, slaveUrl] = [`http://127.0.0.1:${mp}`, `http://127.0.0.1:${sp}`];
  const [slave, master] = await Promise.all([
    startNode({
      models: { b: simText('model-b', '20ms') },
      config: {
        server: { port: sp },
        cluster: { role: 'slave', node_id: 'gpu-b', master_url: masterUrl, public_url: slaveUrl, ...lending },
      },
    }),
    startNode({
      models: { a: simText('model-a', '100ms') },
      config: {
        server: { port: mp },
        cluster: { role: 'master', node_id: 'master', slave_urls: [slaveUrl], ...lending },
      },
    }),
  ]);
  const consoleCall = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const res = await fetch(`${master.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}`, 'content-type': 'application/json' },
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  await expect(async () => {
    const { nodes } = await consoleCall<{ nodes: { healthy: boolean }[] }>('/router/v1/console/cluster/nodes');
    expect(nodes.map((n) => n.healthy)).toEqual([true, true]);
  }).toPass({ timeout: 15_000, intervals: [100] });
  if (!opts.cold)
    for (let i = 0; i < 2; i++)
      expect(await Promise.all([chat(master, 'model-a'), chat(slave, 'model-b')])).toEqual([200, 200]);
  await consoleCall('/router/v1/site/text-routing-groups', {
    method: 'POST',
    body: JSON.stringify({
      owner: { node_id: 'master', model: 'a' },
      helper: { node_id: 'gpu-b', model: 'b' },
      acknowledge_different_weights: true,
    }),
  });
  await expect(async () => {
    const view = lendingViewSchema.parse(await consoleCall('/router/v1/console/lending'));
    expect(view.held.map((n) => [n.nodeId, n.models.map((m) => m.model)])).toEqual([
      ['master', ['a']],
      ['gpu-b', ['b']],
    ]);
  }).toPass({ timeout: 15_000, intervals: [100] });
  // The burst: a backlog on the master's `a`, lent to `b` under a lease (cold: a probe first).
  expect(await Promise.all(Array.from({ length: 10 }, () => chat(master, 'model-a')))).toEqual(Array(10).fill(200));
  await expect(async () => {
    const lent = decisionPageSchema.parse(await consoleCall('/router/v1/console/decisions?event=lent&limit=10'));
    expect(lent.rows.length).toBeGreaterThan(0);
  }).toPass({ timeout: 15_000, intervals: [100] });
  return {
    master,
    slave,
    consoleCall,
    async openLending(page) {
      await page.goto(`${master.url}/?token=${TEST_CONSOLE_TOKEN}`);
      await expect(page.getByTestId('connection-status')).toHaveText('online');
      await page.getByTestId('nav-lending').click();
      await expect(page.getByTestId('lending-page')).toBeVisible();
    },
    stop: async () => {
      await Promise.all([master.stop(), slave.stop()]);
    },
  };
}

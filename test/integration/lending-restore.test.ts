import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfigInput } from '../../src-router/config';
import { type LendingCluster, startLendingCluster } from '../support/lending-cluster';
import { eventually } from '../support/node-harness';

// HELPER-4 and PRICE-5: serving borrowed work loads the linked model on the helper, displacing its own; with
// restore_after_borrow the helper reloads what it held before the run once the delay passes quietly.
const sim = (name: string, tokenTime: string): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['text'],
  contextsize: 4096,
  parallel: 1,
  sim: { load_time: '150ms', token_time: tokenTime },
});

interface Lane {
  lane: string;
  loaded: string | null;
}

describe('borrowed work displaces the helper model and restores it after the run', () => {
  let c: LendingCluster;
  const helperLane = async () =>
    (
      await c.node<{ lanes: Lane[] }>(c.urls.helper, '/router/v1/console/lanes', {
        headers: { authorization: `Bearer ${c.master.token}` },
      })
    ).lanes.find((l) => l.lane === 'text')!;

  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: {
        owner: { a: sim('model-a', '40ms') },
        helper: { b: sim('model-b', '10ms'), x: sim('model-x', '10ms') },
      },
      cluster: { offload_restore_delay: '400ms' },
    });
    for (let i = 0; i < 3; i++) {
      expect((await c.chat('owner', 'model-a')).status).toBe(200);
      expect((await c.chat('helper', 'model-b')).status).toBe(200); // b's fit and load cost
    }
    expect((await c.chat('helper', 'model-x')).status).toBe(200); // the helper's own model holds the lane now
    expect((await helperLane()).loaded).toBe('x');
    await c.link('text', ['owner', 'a'], ['helper', 'b'], { load_if_unloaded: true, restore_after_borrow: true });
  });
  afterAll(() => c?.stop());

  it('lends to the helper (switching it to b), then the helper reloads x once quiet', async () => {
    const answers = await Promise.all(Array.from({ length: 14 }, () => c.chat('owner', 'model-a', { maxTokens: 8 })));
    expect(answers.every((a) => a.status === 200 && a.body.model === 'model-a')).toBe(true);
    const rows = (
      await c.console<{ rows: { event: string; nodeId: string }[] }>(
        '/router/v1/console/decisions?event=lent&limit=100',
      )
    ).rows;
    expect(rows.length).toBeGreaterThan(0);
    await eventually(async () => (await helperLane()).loaded === 'x', {
      timeoutMs: 10_000,
      what: 'x restored on the helper',
    });
    const loads = await c.node<{ lanes: Lane[] }>(c.urls.helper, '/router/v1/console/lanes', {
      headers: { authorization: `Bearer ${c.master.token}` },
    });
    expect(loads.lanes.find((l) => l.lane === 'text')!.loaded).toBe('x');
    // The helper's /metrics counts the restore.
    await eventually(
      async () =>
        /^routerdesk_lending_restores_total\{outcome="ok"\} [1-9]/m.test(
          await (await fetch(`${c.urls.helper}/metrics`)).text(),
        ),
      { what: 'the restore counted in /metrics' },
    );
  });

  it('the plan priced the switch including the reload of the displaced model (PRICE-5)', async () => {
    // The first decision on the burst saw x loaded on the helper: it priced switching to b and reloading x, whatever it
    // then decided — a lease, a skip while x had only just run (PRICE-7), or, when loads are slow on a busy machine
    // and that lasts the whole burst, a probe. (Once b serves the run, its rows price no reload: x comes back once.)
    const plan = await c.decisions({ kind: 'plan' });
    const first = plan.find((r) => (r.held ?? 0) > 0);
    expect(first?.helperSwitchMs).toBeGreaterThan(0);
    expect(Number(first?.details?.helperRestoreMs ?? 0)).toBeGreaterThan(0);
  });
});

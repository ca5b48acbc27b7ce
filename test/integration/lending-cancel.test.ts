import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simText, startLendingCluster, type LendingCluster } from '../support/lending-cluster';
import { eventually, TEST_CONSOLE_TOKEN } from '../support/node-harness';

// Issue #9: a borrowed request no longer ends with its relay connection (a master that dies must not lose it), so
// a client of the owner that leaves is said to the helper explicitly: owner → master → helper cancels it.
describe('a client that leaves while its request is lent', () => {
  let c: LendingCluster;
  const helperStats = async () => {
    const port = (await (await fetch(`${c.urls.helper}/router/v1/console/lanes`, { headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` } })).json() as { lanes: { port: number | null }[] }).lanes[0].port!;
    return (await (await fetch(`http://127.0.0.1:${port}/sim/stats`)).json()) as { active: number; cancelled: number; completed: number };
  };
  beforeAll(async () => {
    c = await startLendingCluster({ slaves: { owner: { a: simText('model-a', '40ms') }, helper: { b: simText('model-b', '20ms') } } });
    for (let i = 0; i < 3; i++) {
      expect((await c.chat('owner', 'model-a', { maxTokens: 4 })).status).toBe(200);
      expect((await c.chat('helper', 'model-b', { maxTokens: 4 })).status).toBe(200);
    }
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  });
  afterAll(() => c?.stop());

  it('cancels the lent request at the helper\'s engine', async () => {
    const before = await helperStats();
    const ctl = new AbortController();
    const calls = Array.from({ length: 8 }, () => c.chat('owner', 'model-a', { maxTokens: 200, signal: ctl.signal }).catch(() => null));
    await eventually(async () => (await helperStats()).active > 0, { what: 'a lent request running at the helper' });
    ctl.abort();
    await Promise.all(calls);
    await eventually(async () => {
      const s = await helperStats();
      return s.active === 0 && s.cancelled > before.cancelled;
    }, { what: 'the helper engine cancelled it', timeoutMs: 15_000 });
    expect((await helperStats()).completed).toBe(before.completed);
  });
});

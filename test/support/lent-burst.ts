import { expect } from 'vitest';
import { type LendingCluster, simText } from './lending-cluster';

/** The replay tests' cluster (issue #15): an owner model `a` (30 ms a token) and a faster helper model `b` (15 ms). */
export const LENT_BURST_SLAVES = {
  owner: { a: simText('model-a', '30ms') },
  helper: { b: simText('model-b', '15ms') },
};

/**
 * Records a lent burst on a cluster started with `LENT_BURST_SLAVES`: the text link, each side warmed so it has its own
 * fit (min samples 3) and load, a pause that keeps the warm-up out of the burst's range, then 14 requests at once to
 * the owner, all answered. Returns the burst's range; its rows reach the stores later (batched): wait for them.
 */
export async function recordLentBurst(c: LendingCluster): Promise<{ from: number; to: number }> {
  await c.link('text', ['owner', 'a'], ['helper', 'b']);
  for (let i = 0; i < 4; i++) {
    expect((await c.chat('owner', 'model-a', { maxTokens: 12 })).status).toBe(200);
    expect((await c.chat('helper', 'model-b', { maxTokens: 12 })).status).toBe(200);
  }
  await new Promise((r) => setTimeout(r, 1200));
  const from = Date.now();
  const answers = await Promise.all(Array.from({ length: 14 }, () => c.chat('owner', 'model-a', { maxTokens: 12 })));
  expect(answers.every((a) => a.status === 200)).toBe(true);
  return { from, to: Date.now() };
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LendingCluster, simText, startLendingCluster } from '../support/lending-cluster';
import { eventually } from '../support/node-harness';

// Issue #14, LEASE-2/3: what an enrolled request costs the cluster when nothing waits. An owner reports a new held
// request — one the router keeps — and every finished job; a request that went straight to its engine is no held
// request, so it makes no 'enqueued' decision. The master decides on a finished job from the state the owner sent
// with it. Requests that do wait are still reported, and lending still works.
describe('an enrolled request that waits for nothing costs one decision', () => {
  let c: LendingCluster;
  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: { owner: { a: simText('model-a', '40ms') }, helper: { b: simText('model-b', '20ms') } },
      // No tick decisions inside the test: only events decide.
      cluster: { scheduling_refresh_interval: '60s' },
    });
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  });
  afterAll(() => c?.stop());

  const made = async () => (await c.console<{ decisionsMade: number }>('/router/v1/console/lending')).decisionsMade;

  /** The master's decision count once it has stopped moving (three equal reads 200 ms apart). */
  async function settled(): Promise<number> {
    let last = -1;
    let same = 0;
    const { n } = await eventually(
      async () => {
        const now = await made();
        same = now === last ? same + 1 : 0;
        last = now;
        return same >= 2 ? { n: now } : undefined;
      },
      { everyMs: 200, what: 'the master to stop deciding' },
    );
    return n;
  }

  it('sequential requests cost one decision each at most: their finished jobs, no enqueued one', async () => {
    const before = await settled();
    const n = 4;
    for (let i = 0; i < n; i++) expect((await c.chat('owner', 'model-a', { maxTokens: 2 })).status).toBe(200);
    await eventually(async () => (await made()) > before, { what: 'a decision on a finished job' });
    const after = await settled();
    // Each finished job is reported (events may share a decision); a request that went straight to its engine is
    // not a held request and is not reported (before issue #14 it was: two decisions a request).
    expect(after - before).toBeGreaterThanOrEqual(1);
    expect(after - before).toBeLessThanOrEqual(n);
  });

  it('a burst that waits in the router queue is reported as held and decided', async () => {
    const since = Date.now();
    const answers = await Promise.all(Array.from({ length: 6 }, () => c.chat('owner', 'model-a', { maxTokens: 4 })));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    await eventually(
      async () =>
        (await c.decisions({ kind: 'plan' })).some(
          (r) => r.at >= since && r.trigger === 'enqueued' && (r.held ?? 0) > 0,
        ),
      {
        what: 'a decision on held requests, from the state the owner sent',
      },
    );
  });
});

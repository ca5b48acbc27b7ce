import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LendingCluster, simText, startLendingCluster } from '../support/lending-cluster';
import { eventually } from '../support/node-harness';

// Issue #25: the master as helper runs a borrowed job under an explicit cancel, not its relay connection. When the
// owner's relay breaks mid-job (here: the owner's own request time-out, shorter than the master's job), the job goes
// on and the owner fetches its answer from the master, instead of the job dying with the relay (502 lent_answer_lost).
describe('issue #25: the in-process master helper keeps its job when the relay breaks', () => {
  let c: LendingCluster;

  beforeAll(async () => {
    c = await startLendingCluster({
      masterModels: { b: simText('model-b', '300ms') },
      slaves: { owner: { a: simText('model-a', '60ms') } },
      clusterOf: { owner: { request_timeout: '1500ms' } },
    });
    // The owner's first request starts its engine, which on a loaded machine can outlast the short request time-out.
    await eventually(async () => (await c.chat('owner', 'model-a')).status === 200);
    for (let i = 0; i < 3; i++) {
      expect((await c.chat('owner', 'model-a')).status).toBe(200);
      expect((await c.chat('master', 'model-b')).status).toBe(200);
    }
    await c.link('text', ['owner', 'a'], ['master', 'b']);
  });
  afterAll(() => c?.stop());

  it("every client is answered; a relay that broke mid-job is resolved by fetching the master's answer", async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => c.chat('owner', 'model-a')));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const fates = await eventually(
      async () => {
        const rows = await c.decisions({ kind: 'dispatch', event: 'lent_fate' });
        return rows.length > 0 && rows;
      },
      { what: 'a lent request whose relay broke' },
    );
    expect(fates.map((r) => r.reason)).not.toContain('lost');
    expect(fates.some((r) => r.reason === 'answered' && r.nodeId === 'owner')).toBe(true);
  });
});

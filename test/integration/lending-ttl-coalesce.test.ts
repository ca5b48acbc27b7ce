import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLUSTER_TOKEN,
  type DecisionRowView,
  type LendingCluster,
  simText,
  startLendingCluster,
  watchHeld,
} from '../support/lending-cluster';
import { eventually } from '../support/node-harness';

// LEASE-2: events for one model coalesce: at most one decision in flight and one queued behind it. LEASE-6: the
// owner times a lease's ttl_ms on its own clock, so a master whose clock runs far ahead neither breaks leases nor
// keeps them alive: once the master stops answering, the owner's lease ends ttl_ms after its last renewal.

const SKEW_MS = 600_000;

async function lendingCluster(env?: Record<string, Record<string, string>>): Promise<LendingCluster> {
  const c = await startLendingCluster({
    slaves: { owner: { a: simText('model-a', '100ms') }, helper: { b: simText('model-b', '40ms') } },
    env,
  });
  for (let i = 0; i < 3; i++) {
    expect((await c.chat('owner', 'model-a')).status).toBe(200);
    expect((await c.chat('helper', 'model-b')).status).toBe(200);
  }
  await c.link('text', ['owner', 'a'], ['helper', 'b']);
  return c;
}

describe('event coalescing (LEASE-2)', () => {
  let c: LendingCluster;
  beforeAll(async () => {
    // No refresh tick during the test (60 s): only events decide. Node `slow` is linked, so every decision polls it.
    c = await startLendingCluster({
      slaves: { owner: { a: simText('model-a', '50ms') }, slow: { s: simText('model-s', '50ms') } },
      cluster: { scheduling_refresh_interval: '60s' },
    });
    await c.link('text', ['owner', 'a'], ['slow', 's']);
  });
  afterAll(async () => {
    c?.slaves.slow.proc.kill('SIGCONT');
    await c?.stop();
  });

  it('a burst of 1,000 events for one owner costs one decision in flight and one queued; every event is answered', async () => {
    const event = () =>
      fetch(`${c.master.url}/router/v1/node/offload/event`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CLUSTER_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ owner: { nodeId: 'owner', model: 'a' }, trigger: 'enqueued' }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { lease: unknown } }));
    const made = async () => (await c.console<{ decisionsMade: number }>('/router/v1/console/lending')).decisionsMade;
    // Open the client's 1,000 connections first, so that the measured burst arrives at once.
    expect((await Promise.all(Array.from({ length: 1000 }, event))).every((a) => a.status === 200)).toBe(true);
    // A decision in flight lasts as long as its slowest poll: node `slow` stops answering (its poll times out), so
    // the whole burst arrives while the first decision is still in flight.
    c.slaves.slow.proc.kill('SIGSTOP');
    const before = await made();
    const answers = await Promise.all(Array.from({ length: 1000 }, event));
    const after = await made();
    // Every event is answered (the owner holds nothing: no lease).
    expect(answers.filter((a) => a.status === 200 && a.body.lease === null).length).toBe(1000);
    // The first event's decision plus one queued decision that every later event shares.
    expect(after - before).toBeGreaterThanOrEqual(1);
    expect(after - before).toBeLessThanOrEqual(2);
    c.slaves.slow.proc.kill('SIGCONT');
    // The decider is not left stuck behind the burst: a later event gets a decision of its own, made after it arrived.
    for (let i = 0; i < 3; i++) {
      const next = await made();
      expect((await event()).status).toBe(200);
      expect(await made()).toBe(next + 1);
    }
  });
});

describe("a master whose clock runs 10 minutes ahead of the owner's (LEASE-6)", () => {
  let c: LendingCluster;
  beforeAll(async () => (c = await lendingCluster({ master: { ROUTERDESK_CLOCK_OFFSET_MS: String(SKEW_MS) } })));
  afterAll(() => c?.stop());

  it("leases work under the skew and expire on the owner's own clock once the master stops answering", async () => {
    let lentSeen = 0;
    let killedAt = 0;
    let ttlMs = 0;
    const w = watchHeld(
      c,
      'owner',
      (v) => (lentSeen += v.models.find((m) => m.model === 'a')?.held.filter((i) => i.state === 'lent').length ?? 0),
    );
    const answers = Promise.all(Array.from({ length: 14 }, () => c.chat('owner', 'model-a')));
    // Leases work: lent requests come back answered by the helper while the master runs 10 minutes ahead.
    await eventually(
      async () => {
        const lending = await c.console<{ leases: { owner: { nodeId: string }; ttlMs: number }[] }>(
          '/router/v1/console/lending',
        );
        const lease = lending.leases.find((l) => l.owner.nodeId === 'owner');
        if (lease) ttlMs = lease.ttlMs;
        const done = (
          await c.node<{ rows: DecisionRowView[] }>(
            c.urls.owner,
            '/router/v1/node/decisions?kind=dispatch&event=lent&limit=1000',
          )
        ).rows;
        return lease && lentSeen > 0 && done.length >= 2;
      },
      { what: 'a live lease and lent requests under the skewed master' },
    );
    expect(ttlMs).toBeGreaterThan(0);
    c.master.proc.kill('SIGKILL');
    killedAt = Date.now();
    const results = await answers; // the owner serves whatever the dead master could not relay
    await w.stop();
    expect(results.map((r) => r.status)).toEqual(Array(14).fill(200));
    const cleared = await eventually(
      async () => {
        const rows = (
          await c.node<{ rows: DecisionRowView[] }>(
            c.urls.owner,
            '/router/v1/node/decisions?kind=dispatch&event=lease_cleared&limit=1000',
          )
        ).rows;
        return rows.find((r) => r.reason === 'ttl_expired');
      },
      { what: 'lease_cleared ttl_expired on the owner', timeoutMs: ttlMs + 5_000 },
    );
    const all = (
      await c.node<{ rows: DecisionRowView[] }>(c.urls.owner, '/router/v1/node/decisions?kind=dispatch&limit=1000')
    ).rows;
    // Never cleared by the clock while the master kept renewing it.
    expect(all.filter((r) => r.event === 'lease_cleared' && r.reason === 'ttl_expired' && r.at < killedAt)).toEqual([]);
    // Expired ttl_ms after its last renewal (shortly before the master died), on the owner's clock, not the master's.
    expect(cleared.at - killedAt).toBeGreaterThanOrEqual(ttlMs - 1_500);
    expect(cleared.at - killedAt).toBeLessThanOrEqual(ttlMs + 1_500);
    expect(Math.abs(cleared.at - Date.now())).toBeLessThan(SKEW_MS / 2);
  });
});

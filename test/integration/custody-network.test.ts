import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetHosts } from '../../src-router/bench/net-hosts';
import { type LendingCluster, simText, startLendingCluster, watchHeld } from '../support/lending-cluster';
import { eventually, TEST_CONSOLE_TOKEN } from '../support/node-harness';

// Issue #25 on a real network: master, owner and helper each on its own network host (a namespace with its own
// address on one bridge). While the helper's engine runs a lent request, every packet between master and helper is
// dropped, both ways and without a reset, for longer than the master's request time-out; owner ↔ helper and
// owner ↔ master stay up. Every client gets one answer, and no prompt runs at two engines: the unknown fates are
// resolved at the helper by the owner, which can still reach it.
const N = 8;
const JOB_TOKEN_MS = 400; // 8 tokens: a 3.2 s job at either engine

describe('issue #25: custody when the link between master and helper drops without a reset', () => {
  let hosts: NetHosts;
  let c: LendingCluster;

  beforeAll(async () => {
    hosts = await NetHosts.create(['master', 'owner', 'helper']);
    c = await startLendingCluster({
      hosts,
      slaves: { owner: { a: simText('model-a', '60ms') }, helper: { b: simText('model-b', '30ms') } },
      clusterOf: { master: { request_timeout: '5s' } },
    });
    for (let i = 0; i < 3; i++) {
      expect((await c.chat('owner', 'model-a')).status).toBe(200);
      expect((await c.chat('helper', 'model-b')).status).toBe(200);
    }
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  }, 90_000);
  afterAll(async () => {
    await c?.stop();
    await hosts?.destroy();
  });

  /** What the sim engine of a node's text lane saw, read inside that node's host (the engine listens on its loopback). */
  const engineSeen = async (node: 'owner' | 'helper') => {
    const lanes = (
      await c.node<{ lanes: { lane: string; port: number | null }[] }>(c.urls[node], '/router/v1/console/lanes', {
        headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
      })
    ).lanes;
    const port = lanes.find((l) => l.lane === 'text')?.port;
    if (!port) return [];
    const text = await hosts.exec(node, process.execPath, [
      '-e',
      `fetch('http://127.0.0.1:${port}/sim/seen').then((r) => r.text()).then((t) => process.stdout.write(t))`,
    ]);
    return (JSON.parse(text) as { entries: { head: string; started: boolean }[] }).entries;
  };

  /**
   * Sends N prompts marked `prefix-i` to the owner; once the helper's router runs a lent one, `fault` runs (once).
   * Resolves when the fault is in place, with the clients' answers still to come.
   */
  async function burstWithFault(prefix: string, fault: () => Promise<unknown>) {
    let hit: Promise<unknown> | undefined;
    const w = watchHeld(
      c,
      'helper',
      (v) => {
        if (!hit && v.models.find((m) => m.model === 'b')?.active.some((i) => i.borrowed)) hit = fault();
      },
      20,
    );
    const answers = Promise.all(
      Array.from({ length: N }, (_, i) =>
        c.chat('owner', 'model-a', {
          extra: { sim_token_time: JOB_TOKEN_MS, messages: [{ role: 'user', content: `${prefix}-${i}` }] },
        }),
      ),
    );
    await eventually(() => hit !== undefined, { timeoutMs: 30_000, what: 'a lent request running at the helper' });
    await w.stop();
    await hit;
    return answers;
  }

  /** How many engines started each prompt `prefix-i`. */
  async function runsOf(prefix: string): Promise<number[]> {
    const seen = [...(await engineSeen('owner')), ...(await engineSeen('helper'))];
    return Array.from(
      { length: N },
      (_, i) => seen.filter((e) => e.started && e.head.includes(`${prefix}-${i}`)).length,
    );
  }

  /** lent_fate rows written since `before` (a set of `node/id` keys taken earlier). */
  const fateKeys = async () =>
    new Set((await c.decisions({ kind: 'dispatch', event: 'lent_fate' })).map((r) => `${r.nodeId}/${r.id}`));
  const fatesSince = async (before: Set<string>) =>
    (await c.decisions({ kind: 'dispatch', event: 'lent_fate' })).filter((r) => !before.has(`${r.nodeId}/${r.id}`));

  it('every client is answered once and no prompt runs twice', async () => {
    const answers = await burstWithFault('net-marker', () => hosts.cut('master', 'helper'));
    // Down for longer than the master's request time-out (5 s) and a job, then up again.
    await new Promise((r) => setTimeout(r, 9_000));
    await hosts.mend('master', 'helper');
    const done = await answers;
    expect(done.map((a) => a.status)).toEqual(Array(N).fill(200));
    expect(await runsOf('net-marker')).toEqual(Array(N).fill(1));
    // The helper's lent work was resolved at the helper, never refused for the owner to run again.
    const rows = await c.decisions({ kind: 'dispatch' });
    expect(rows.filter((r) => r.event === 'relay_refused' && r.reason === 'helper_unreachable')).toEqual([]);
    expect(rows.filter((r) => r.event === 'lent_fate' && r.reason === 'lost')).toEqual([]);
    expect(rows.some((r) => r.event === 'lent_fate' && (r.reason === 'answered' || r.reason === 'withdrawn'))).toBe(
      true,
    );
  }, 120_000);

  it('owner and master lose each other mid-burst: every client is answered while the link is still down, nothing runs twice', async () => {
    const before = await fateKeys();
    const answers = await burstWithFault('split-marker', () => hosts.cut('owner', 'master'));
    try {
      // The owner gives the master up (its registrations fail) and resolves its lent requests at the helper itself:
      // the clients do not wait for the link, nor for the relay's time-out.
      const done = await answers;
      expect(done.map((a) => a.status)).toEqual(Array(N).fill(200));
    } finally {
      await hosts.mend('owner', 'master');
    }
    expect(await runsOf('split-marker')).toEqual(Array(N).fill(1));
    const fates = await eventually(
      async () => {
        const rows = await fatesSince(before);
        return rows.some((r) => r.nodeId === 'owner') && rows;
      },
      { what: "the owner's resolutions gathered once the link is back", timeoutMs: 20_000 },
    );
    // Resolved at the helper, by the owner (and by the master, for its own forwards that outlived its time-out).
    expect(
      fates.map((r) => `${r.nodeId}:${r.reason}`).filter((f) => !/^(owner|master):(answered|withdrawn)$/.test(f)),
    ).toEqual([]);
    expect(fates.some((r) => r.nodeId === 'owner')).toBe(true);
  }, 150_000);

  it('a helper neither master nor owner can reach loses its lent requests in bounded time; each runs twice at most, counted', async () => {
    const before = await fateKeys();
    const answers = await burstWithFault('island-marker', () =>
      Promise.all([hosts.cut('master', 'helper'), hosts.cut('owner', 'helper')]),
    );
    // Every client is answered while the helper is still cut off: the master's health polls give it up, the owner
    // cannot reach it either, and runs its requests itself.
    const done = await answers;
    expect(done.map((a) => a.status)).toEqual(Array(N).fill(200));
    const fresh = () => fatesSince(before);
    const takenBack = (await fresh()).filter((r) => r.reason === 'taken_back');
    expect(takenBack.length).toBeGreaterThan(0);
    expect(takenBack.every((r) => r.nodeId === 'owner' && r.helperNode === 'helper')).toBe(true);
    await hosts.mend('master', 'helper');
    await hosts.mend('owner', 'helper');
    // Once it answers again, the helper is told to drop each request taken back from it, and says whether it ran it.
    const told = await eventually(
      async () => {
        const rows = (await fresh()).filter((r) => r.reason === 'dropped' || r.reason === 'started_twice');
        return rows.length === takenBack.length && rows;
      },
      { timeoutMs: 30_000, what: 'every helper told to drop what was taken back' },
    );
    expect(new Set(told.map((r) => r.requestId))).toEqual(new Set(takenBack.map((r) => r.requestId)));
    // A prompt runs at two engines only if it was taken back and had started at the helper, and each such is counted.
    const twice = (await runsOf('island-marker')).filter((n) => n > 1);
    expect(twice.every((n) => n === 2)).toBe(true);
    expect(twice.length).toBeLessThanOrEqual(told.filter((r) => r.reason === 'started_twice').length);
  }, 150_000);
});

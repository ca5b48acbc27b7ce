import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNodeConfig } from '../../src-router/config';
import { replayResultSchema } from '../../src-router/contract/replay';
import { replay, replaySettingsOf, withSettingChanges } from '../../src-router/lending/replay';
import { openStoreReadOnly, readReplaySource } from '../../src-router/store';
import { fastLending, type LendingCluster, startLendingCluster } from '../support/lending-cluster';
import { LENT_BURST_SLAVES, recordLentBurst } from '../support/lent-burst';
import { eventually, runCli } from '../support/node-harness';

/**
 * What-if replay against real traffic: a burst on real nodes (an owner and a faster helper, sim engines) is recorded
 * into their stores; replaying those stores with the recorded settings reproduces the recorded outcome within 10%.
 */
describe('routerdesk replay of recorded traffic', () => {
  let c: LendingCluster;
  let burstFrom = 0;
  let burstTo = 0;
  const stores = () => [c.master.dir, c.slaves.owner.dir, c.slaves.helper.dir].map((d) => join(d, 'store'));

  beforeAll(async () => {
    c = await startLendingCluster({ slaves: LENT_BURST_SLAVES });
    ({ from: burstFrom, to: burstTo } = await recordLentBurst(c));
    // Batched analytics and decision rows reach the stores.
    await eventually(
      async () => {
        const src = readAll();
        return (
          src.some((s) => s.decisions.some((d) => d.event === 'lent')) &&
          src.find((s) => s.nodeId === 'owner')!.requests.filter((r) => r.finishedAt - r.durationMs >= burstFrom)
            .length === 14
        );
      },
      { timeoutMs: 10_000, what: 'the burst in the stores' },
    );
  }, 120_000);

  afterAll(async () => {
    await c?.stop();
  });

  function readAll() {
    return stores().map((dir) => {
      const db = openStoreReadOnly(dir);
      try {
        return readReplaySource(db, { from: burstFrom, to: burstTo });
      } finally {
        db.close();
      }
    });
  }

  const recordedSettings = () => replaySettingsOf(parseNodeConfig({ cluster: fastLending() }).cluster);

  it('reproduces the recorded burst within 10% with the recorded settings', () => {
    const r = replay(readAll(), { from: burstFrom, to: burstTo, settings: recordedSettings(), maxEvents: 1_000_000 });
    expect(r.capped).toBe(false);
    expect(r.unpriced).toBe(0);
    expect(r.recorded.requests).toBe(14);
    expect(r.replayed.requests).toBe(14);
    expect(r.recorded.lent).toBeGreaterThan(0);
    expect(r.recorded.bursts).toHaveLength(1);
    const within = (rec: number | null, rep: number | null) => {
      expect(rec).not.toBeNull();
      expect(Math.abs(rep! - rec!) / rec!, `recorded ${rec}, replayed ${rep}`).toBeLessThanOrEqual(0.1);
    };
    within(r.recorded.bursts[0].makespanMs, r.replayed.bursts[0].makespanMs);
    within(r.recorded.completionP50Ms, r.replayed.completionP50Ms);
    within(r.recorded.completionP95Ms, r.replayed.completionP95Ms);
    expect(Math.abs(r.replayed.lent - r.recorded.lent)).toBeLessThanOrEqual(
      Math.max(1, Math.round(0.1 * r.recorded.lent)),
    );
  });

  it('the CLI prints both sides and writes the JSON; a changed setting changes the replay', async () => {
    const json = join(c.master.dir, 'replay.json');
    const args = [
      'replay',
      ...stores().flatMap((s) => ['--store', s]),
      '--from',
      String(burstFrom),
      '--to',
      String(burstTo),
      '--json',
      json,
    ];
    const base = await runCli([
      ...args,
      '--set',
      'cluster.scheduling_min_samples=3',
      '--set',
      'cluster.scheduling_refresh_interval=400ms',
      '--set',
      'cluster.offload_probe_idle=300ms',
    ]);
    expect(base.code, base.stderr).toBe(0);
    expect(base.stdout).toMatch(/recorded\s+replayed/);
    expect(base.stdout).toMatch(/burst 1 makespan/);
    const { readFileSync } = await import('node:fs');
    const parsed = replayResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    expect(parsed.replayed.requests).toBe(14);
    // No helper fit counts and probes an hour away: nothing is lent.
    const noLending = replay(readAll(), {
      from: burstFrom,
      to: burstTo,
      settings: withSettingChanges(recordedSettings(), { offload_probe_idle: '1h', scheduling_min_samples: 1000 }),
      maxEvents: 1_000_000,
    });
    expect(noLending.replayed.lent).toBe(0);
    expect(noLending.replayed.bursts[0].makespanMs).toBeGreaterThan(parsed.replayed.bursts[0].makespanMs);
    const bad = await runCli([...args, '--set', 'cluster.no_such=1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/no_such/);
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  REPLAY_MAX_RANGE_MS,
  type ReplayResultWire,
  replayResultSchema,
  replaySourceSchema,
} from '../../src-router/contract/replay';
import { CLUSTER_TOKEN, type LendingCluster, startLendingCluster } from '../support/lending-cluster';
import { LENT_BURST_SLAVES, recordLentBurst } from '../support/lent-burst';
import { eventually, runCli, TEST_CONSOLE_TOKEN } from '../support/node-harness';

/**
 * The console's what-if replay (issue #15) on real nodes: `POST /router/v1/console/replay` reads the master's rows
 * directly and each member's through `GET /router/v1/node/replay-source`, and replays them; its recorded numbers are
 * the CLI's for the same range and stores, changed settings or no links change the replayed ones.
 */
describe('console replay of recorded traffic', () => {
  let c: LendingCluster;
  let burstFrom = 0;
  let burstTo = 0;
  const stores = () => [c.master.dir, c.slaves.owner.dir, c.slaves.helper.dir].map((d) => join(d, 'store'));

  const post = async (body: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await fetch(`${c.master.url}/router/v1/console/replay`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const replayOf = async (body: Record<string, unknown>): Promise<ReplayResultWire> => {
    const r = await post({ from: burstFrom, to: burstTo, ...body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return replayResultSchema.parse(r.body);
  };

  beforeAll(async () => {
    c = await startLendingCluster({ slaves: LENT_BURST_SLAVES });
    ({ from: burstFrom, to: burstTo } = await recordLentBurst(c));
    // The rows reach the stores (batched): the owner's node API answers the whole burst and the lending.
    await eventually(
      async () => {
        const src = replaySourceSchema.parse(
          await c.node(c.urls.owner, `/router/v1/node/replay-source?from=${burstFrom}&to=${burstTo}`),
        );
        return (
          src.requests.filter((r) => r.finishedAt - r.durationMs >= burstFrom).length === 14 &&
          src.decisions.some((d) => d.event === 'lent')
        );
      },
      { timeoutMs: 10_000, what: 'the burst in the owner rows' },
    );
  }, 120_000);

  afterAll(async () => {
    await c?.stop();
  });

  it('the node API answers its rows for the range, with the cluster token only', async () => {
    const src = replaySourceSchema.parse(
      await c.node(c.urls.owner, `/router/v1/node/replay-source?from=${burstFrom}&to=${burstTo}`),
    );
    expect(src.nodeId).toBe('owner');
    expect(src.links).toHaveLength(1);
    expect(src.truncated).toBe(false);
    const anon = await fetch(`${c.urls.owner}/router/v1/node/replay-source?from=${burstFrom}&to=${burstTo}`);
    expect(anon.status).toBe(401);
    const noFrom = await fetch(`${c.urls.owner}/router/v1/node/replay-source?to=${burstTo}`, {
      headers: { authorization: `Bearer ${CLUSTER_TOKEN}` },
    });
    expect(noFrom.status).toBe(400);
    expect(((await noFrom.json()) as { error: { param: string } }).error.param).toBe('from');
  });

  it('recorded numbers equal the CLI for the same range; changed settings and no links change the replay', async () => {
    const r = await replayOf({});
    expect(r.missing).toBeUndefined();
    expect([...r.nodes].sort()).toEqual(['helper', 'master', 'owner'].filter((n) => r.nodes.includes(n)).sort());
    expect(r.recorded.requests).toBe(14);
    expect(r.recorded.lent).toBeGreaterThan(0);

    const json = join(c.master.dir, 'replay-console.json');
    const cli = await runCli([
      'replay',
      ...stores().flatMap((s) => ['--store', s]),
      '--from',
      String(burstFrom),
      '--to',
      String(burstTo),
      '--json',
      json,
      '--set',
      'cluster.scheduling_min_samples=3',
      '--set',
      'cluster.scheduling_refresh_interval=400ms',
      '--set',
      'cluster.offload_probe_idle=300ms',
    ]);
    expect(cli.code, cli.stderr).toBe(0);
    const fromCli = replayResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    expect(r.recorded).toEqual(fromCli.recorded);
    expect(r.settings).toEqual(fromCli.settings);

    const noLinks = await replayOf({ links: [] });
    expect(noLinks.links).toBe(0);
    expect(noLinks.replayed.lent).toBe(0);
    expect(noLinks.recorded).toEqual(r.recorded);
    expect(noLinks.replayed.bursts[0].makespanMs).toBeGreaterThan(r.replayed.bursts[0].makespanMs);

    const noProbes = await replayOf({ settings: { offload_probe_idle: '1h', scheduling_min_samples: 1000 } });
    expect(noProbes.settings.offload_probe_idle).toBe(3_600_000);
    expect(noProbes.replayed.lent).toBe(0);
    expect(noProbes.replayed).not.toEqual(r.replayed);
  });

  it('bad bodies are 400s naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ from: burstTo, to: burstFrom }, 'to'],
      [{ from: 0, to: REPLAY_MAX_RANGE_MS + 1 }, 'to'],
      [{ to: burstTo }, 'from'],
      [{ from: burstFrom, to: burstTo, settings: { offload_probe_idle: 'soon' } }, 'settings.offload_probe_idle'],
      // An unknown key: the schema names the settings object and the key.
      [{ from: burstFrom, to: burstTo, settings: { no_such: 1 } }, 'settings'],
      [{ from: burstFrom, to: burstTo, links: [{ owner: { nodeId: 'owner' } }] }, 'links.0.owner.model'],
      [{ from: burstFrom, to: burstTo, extra: true }, ''],
    ];
    for (const [body, param] of cases) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      const err = r.body.error as { param: string | null; message: string };
      if (param) expect(err.param, JSON.stringify(r.body)).toBe(param);
      if (param === 'settings') expect(err.message).toMatch(/no_such/);
      if (!param) expect(err.message).toMatch(/extra|unrecognized/i);
    }
  });
});

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { largestReplayBody, seedReplayStore } from '../../src-router/bench/replay-load';
import { parseNodeConfig } from '../../src-router/config';
import {
  REPLAY_SOURCE_CAP,
  REPLAY_SOURCE_HISTORY_CAP,
  replayResultSchema,
  replaySourceSchema,
} from '../../src-router/contract/replay';
import { replay, replayLinks, replaySettingsOf, withSettingChanges } from '../../src-router/lending/replay';
import { openStoreReadOnly, readReplaySource } from '../../src-router/store';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode, tempDir } from '../support/node-harness';

/**
 * The console's what-if replay runs in a worker thread of a real node: while the largest replay runs (a day's range,
 * a 10 ms refresh interval, the event cap; its records make it run past its time budget unless stopped), the node
 * answers /health and refuses a second replay (429); the client leaving stops it and the next replay is accepted. A
 * replay's answer is what the pure replay function gives for the same store rows and settings, and the rows a member
 * answers (read in a worker too) are the ones its store holds.
 */
describe('console replay in a worker thread', () => {
  let node: TestNode;
  const from = Date.now() - 24 * 3_600_000;
  const CLUSTER_TOKEN = 'replay-worker-cluster-token-0123456789';
  const started = () => node.output().split('replay started in a worker thread').length - 1;

  const post = (body: unknown, signal?: AbortSignal) =>
    fetch(`${node.url}/router/v1/console/replay`, {
      method: 'POST',
      signal,
      headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    const dir = tempDir();
    // 300 requests that each hold the model for 23 h: a replay's every lending tick prices them (slow per event).
    seedReplayStore(join(dir, 'store'), 'test-node', { from, longRequests: 300 });
    node = await startNode({
      models: {},
      dir,
      config: { cluster: { role: 'master', token: CLUSTER_TOKEN } },
      env: { ROUTERDESK_LOG_LEVEL: 'info' },
    });
  });

  afterAll(async () => {
    await node?.stop();
  });

  it('answers what the pure replay function answers for the same rows', async () => {
    const store = join(node.dir, 'store');
    for (const body of [
      largestReplayBody('test-node', from, 2_000),
      { ...largestReplayBody('test-node', from), links: [] },
    ]) {
      const res = await post(body);
      expect(res.status, await res.clone().text()).toBe(200);
      const got = replayResultSchema.parse(await res.json());
      const db = openStoreReadOnly(store);
      const src = readReplaySource(db, {
        from: body.from,
        to: body.to,
        cap: REPLAY_SOURCE_CAP,
        historyCap: REPLAY_SOURCE_HISTORY_CAP,
      });
      db.close();
      const settings = withSettingChanges(replaySettingsOf(parseNodeConfig({}).cluster), body.settings);
      const want = replay([src], {
        from: body.from,
        to: body.to,
        settings,
        links: replayLinks(body.links),
        maxEvents: body.maxEvents,
      });
      expect(got).toEqual(want);
      expect(got.recorded.requests).toBe(301);
    }
  });

  it("answers a member's request for its rows (read in a worker) with the rows the store holds", async () => {
    const to = from + 24 * 3_600_000;
    const res = await fetch(`${node.url}/router/v1/node/replay-source?from=${from}&to=${to}`, {
      headers: { authorization: `Bearer ${CLUSTER_TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const db = openStoreReadOnly(join(node.dir, 'store'));
    const want = readReplaySource(db, { from, to, cap: REPLAY_SOURCE_CAP, historyCap: REPLAY_SOURCE_HISTORY_CAP });
    db.close();
    const got = replaySourceSchema.parse(await res.json());
    expect(got).toEqual(JSON.parse(JSON.stringify(want)));
    expect(got.requests).toHaveLength(301);
  });

  it('keeps serving while the largest replay runs, refuses a second one, and stops it when its client leaves', async () => {
    const before = started();
    const client = new AbortController();
    let answered = false;
    const big = post(largestReplayBody('test-node', from), client.signal).then(
      (r) => ((answered = true), r.status),
      () => ((answered = true), 'aborted'),
    );
    await eventually(() => started() > before, { what: 'the large replay started in its worker' });

    const health = await fetch(`${node.url}/health`);
    expect(health.status).toBe(200);
    const second = await post(largestReplayBody('test-node', from, 1_000));
    expect(second.status).toBe(429);
    expect(((await second.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'replay_busy',
      message: expect.stringMatching(/already running/),
    });
    // The large replay cannot have answered: its records take it past its time budget.
    expect(answered).toBe(false);

    client.abort();
    expect(await big).toBe('aborted');
    await eventually(() => node.output().includes('replay stopped: the client left'), {
      what: 'the node stopping the replay',
    });
    const next = await eventually(
      async () => {
        const r = await post(largestReplayBody('test-node', from, 1_000));
        return r.status === 429 ? null : r;
      },
      { what: 'a replay accepted after the first client left' },
    );
    expect(next.status).toBe(200);
    expect(replayResultSchema.parse(await next.json()).events).toBe(1_000);
  });
});

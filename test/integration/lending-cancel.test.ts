import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLUSTER_TOKEN, type LendingCluster, simText, startLendingCluster } from '../support/lending-cluster';
import { eventually, TEST_CONSOLE_TOKEN } from '../support/node-harness';

// Issue #9: a borrowed request no longer ends with its relay connection (a master that dies must not lose it), so
// a client of the owner that leaves is said to the helper explicitly: owner → master → helper cancels it.
describe('a client that leaves while its request is lent', () => {
  let c: LendingCluster;
  const helperStats = async () => {
    const port = (
      (await (
        await fetch(`${c.urls.helper}/router/v1/console/lanes`, {
          headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
        })
      ).json()) as { lanes: { port: number | null }[] }
    ).lanes[0].port!;
    return (await (await fetch(`http://127.0.0.1:${port}/sim/stats`)).json()) as {
      requests: number;
      active: number;
      cancelled: number;
      completed: number;
    };
  };
  /** The master's side, played by the test: a cancel, and a borrowed request as the relay delivers it (LEASE-5). */
  const asMaster = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${c.urls.helper}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLUSTER_TOKEN}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const borrowed = (id: string) =>
    asMaster(
      '/router/v1/node/worker/v1/chat/completions',
      { model: 'b', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 },
      { 'x-routerdesk-borrowed-from': 'owner/a', 'x-routerdesk-request-id': id },
    );
  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: { owner: { a: simText('model-a', '40ms') }, helper: { b: simText('model-b', '20ms') } },
    });
    for (let i = 0; i < 3; i++) {
      expect((await c.chat('owner', 'model-a', { maxTokens: 4 })).status).toBe(200);
      expect((await c.chat('helper', 'model-b', { maxTokens: 4 })).status).toBe(200);
    }
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  });
  afterAll(() => c?.stop());

  it("cancels the lent request at the helper's engine", async () => {
    const before = await helperStats();
    const ctl = new AbortController();
    const calls = Array.from({ length: 8 }, () =>
      c.chat('owner', 'model-a', { maxTokens: 200, signal: ctl.signal }).catch(() => null),
    );
    await eventually(async () => (await helperStats()).active > 0, { what: 'a lent request running at the helper' });
    ctl.abort();
    await Promise.all(calls);
    await eventually(
      async () => {
        const s = await helperStats();
        return s.active === 0 && s.cancelled > before.cancelled;
      },
      { what: 'the helper engine cancelled it', timeoutMs: 15_000 },
    );
    expect((await helperStats()).completed).toBe(before.completed);
  });

  it('a cancel that comes before its borrowed request (still in its relay on a busy cluster) stops it when it arrives: no engine runs it', async () => {
    const before = await helperStats();
    const cancel = await asMaster('/router/v1/node/offload/cancel', { requestIds: ['cancelled-early'] });
    expect(cancel.status).toBe(200);
    const late = await borrowed('cancelled-early');
    expect(late.status).toBeGreaterThanOrEqual(400);
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('client_closed');
    expect((await helperStats()).requests).toBe(before.requests);
    // Another request is not affected, and the remembered cancel is used up: the same id later runs.
    expect((await borrowed('not-cancelled')).status).toBe(200);
    expect((await borrowed('cancelled-early')).status).toBe(200);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLUSTER_TOKEN, type LendingCluster, simText, startLendingCluster } from '../support/lending-cluster';
import { eventually, TEST_CONSOLE_TOKEN } from '../support/node-harness';

// Issue #25: the master's forward to a helper that outlives the master's own request time-out (the way a link that
// drops without a reset looks to it) leaves the request's fate unknown. It is resolved at the helper — withdrawn if
// it has not started, its answer fetched if it has — and never run again on the owner while the helper runs it.
const N = 6;

describe('issue #25: a lent request whose forward broke off is resolved at the helper, never run twice', () => {
  let c: LendingCluster;

  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: { owner: { a: simText('model-a', '60ms') }, helper: { b: simText('model-b', '30ms') } },
      clusterOf: { master: { request_timeout: '1500ms' } },
    });
    for (let i = 0; i < 3; i++) {
      expect((await c.chat('owner', 'model-a')).status).toBe(200);
      expect((await c.chat('helper', 'model-b')).status).toBe(200);
    }
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  });
  afterAll(() => c?.stop());

  const engineSeen = async (node: 'owner' | 'helper') => {
    const lanes = (
      await c.node<{ lanes: { lane: string; port: number | null }[] }>(c.urls[node], '/router/v1/console/lanes', {
        headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
      })
    ).lanes;
    const port = lanes.find((l) => l.lane === 'text')?.port;
    if (!port) return [];
    return (
      (await (await fetch(`http://127.0.0.1:${port}/sim/seen`)).json()) as {
        entries: { head: string; started: boolean }[];
      }
    ).entries;
  };

  it('a borrowed request delivered twice runs once: the second copy is 409 duplicate_request, its answer fetched from the first', async () => {
    const worker = (id: string) =>
      fetch(`${c.urls.helper}/router/v1/node/worker/v1/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${CLUSTER_TOKEN}`,
          'content-type': 'application/json',
          'x-routerdesk-borrowed-from': 'owner/a',
          'x-routerdesk-request-id': id,
        },
        body: JSON.stringify({
          model: 'b',
          messages: [{ role: 'user', content: 'dup-marker' }],
          max_tokens: 8,
          sim_token_time: 100,
        }),
      });
    const first = worker('dup-1');
    await eventually(
      async () =>
        (
          await c.node<{ models: { model: string; active: { id: string }[] }[] }>(c.urls.helper, '/router/v1/node/held')
        ).models.some((m) => m.active.some((i) => i.id === 'dup-1')),
      { what: 'the first copy running' },
    );
    const second = await worker('dup-1');
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe('duplicate_request');
    // The refused copy is not the request's end: the first copy still runs (or has just answered), never 'failed'.
    const during = await c.node<{ state: string }>(
      c.urls.helper,
      '/router/v1/node/offload/answer?request=dup-1&wait=0',
    );
    expect(['running', 'answered']).toContain(during.state);
    expect((await first).status).toBe(200);
    const third = await worker('dup-1');
    expect(third.status).toBe(409);
    await third.body?.cancel();
    const kept = await c.node<{ state: string }>(c.urls.helper, '/router/v1/node/offload/answer?request=dup-1&wait=0');
    expect(kept.state).toBe('answered');
    const seen = (await engineSeen('helper')).filter((e) => e.head.includes('dup-marker'));
    expect(seen).toHaveLength(1);
  });

  it('every client is answered once; each prompt ran at one engine; each unknown fate has its lent_fate row', async () => {
    // Each job takes 8 × 400 ms = 3.2 s: longer than the master's forward may take (1.5 s).
    const answers = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        c.chat('owner', 'model-a', {
          extra: { sim_token_time: 400, messages: [{ role: 'user', content: `fate-marker-${i}` }] },
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(N).fill(200));
    const fates = await eventually(
      async () => {
        const rows = await c.decisions({ kind: 'dispatch', event: 'lent_fate' });
        return rows.some((r) => r.reason === 'answered') && rows;
      },
      { what: 'a lent request whose answer was fetched from its helper' },
    );
    expect(fates.every((r) => r.helperNode === 'helper' && r.ownerNode === 'owner' && r.requestId)).toBe(true);
    expect(fates.filter((r) => r.reason === 'lost')).toEqual([]);
    // No break of the forward was taken for a refusal the owner runs again.
    expect(
      (await c.decisions({ kind: 'dispatch', event: 'relay_refused' })).filter(
        (r) => r.reason === 'helper_unreachable',
      ),
    ).toEqual([]);
    const [owner, helper] = await Promise.all([engineSeen('owner'), engineSeen('helper')]);
    for (let i = 0; i < N; i++) {
      const ran = [...owner, ...helper].filter((e) => e.started && e.head.includes(`fate-marker-${i}`));
      expect(ran, `fate-marker-${i}`).toHaveLength(1);
    }
    // The nodes' /metrics count the fates as the log has them, by reason (on the node that resolved each).
    await eventually(
      async () => {
        const logged: Record<string, number> = {};
        for (const r of await c.decisions({ kind: 'dispatch', event: 'lent_fate' }))
          logged[r.reason!] = (logged[r.reason!] ?? 0) + 1;
        const counted: Record<string, number> = {};
        for (const url of [c.master.url, c.urls.owner, c.urls.helper]) {
          for (const m of (await (await fetch(`${url}/metrics`)).text()).matchAll(
            /^routerdesk_lending_lent_fates_total\{[^}]*reason="([a-z_]+)"\} (\d+)$/gm,
          ))
            counted[m[1]] = (counted[m[1]] ?? 0) + Number(m[2]);
        }
        expect(counted).toEqual(logged);
        return true;
      },
      { what: 'the lent_fate counters to equal the log' },
    );
  });
});

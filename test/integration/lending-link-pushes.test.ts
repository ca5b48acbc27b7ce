import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LendingCluster, simText, startLendingCluster } from '../support/lending-cluster';
import { eventually } from '../support/node-harness';

// Issue #9: links are the master's to decide. A master never takes pushed links; a slave takes them only from the
// master it registered with, and never an older run's; a malformed pushed lease is a 400, never a crash.
describe('link and lease pushes from peers', () => {
  let c: LendingCluster;
  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: { owner: { a: simText('model-a', '5ms') }, helper: { b: simText('model-b', '5ms') } },
    });
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  });
  afterAll(() => c?.stop());

  const push = (url: string, body: unknown) =>
    fetch(`${url}/router/v1/node/links`, {
      method: 'POST',
      headers: { authorization: `Bearer lending-test-token-0123456789`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const links = [
    {
      id: 'evil',
      lane: 'text',
      owner: { nodeId: 'owner', model: 'a' },
      helper: { nodeId: 'helper', model: 'b' },
      loadIfUnloaded: true,
      restoreAfterBorrow: false,
    },
  ];

  it('a master refuses pushed links (403 wrong_role); its links stay', async () => {
    const res = await push(c.master.url, { version: 999, epoch: 'intruder:9999999999999', links: [] });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('wrong_role');
    expect((await c.console<{ links: unknown[] }>('/router/v1/site/text-routing-groups')).links).toHaveLength(1);
  });

  it('a slave refuses links pushed in the name of another node, or from an older run of its master', async () => {
    const forged = await push(c.urls.owner, { version: 999, epoch: 'intruder:9999999999999', links });
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('not_my_master');
    const old = await push(c.urls.owner, { version: 999, epoch: 'master:1', links });
    expect(old.status).toBe(200);
    expect(await old.json()).toMatchObject({ stale: true });
    const held = await c.node<{ models: { model: string }[] }>(c.urls.owner, '/router/v1/node/held');
    expect(held.models.map((m) => m.model)).toEqual(['a']);
  });

  it('a malformed pushed lease is a 400 naming the field; the node keeps serving', async () => {
    for (const lease of [
      { slots: 'two' },
      {
        linkId: 'l',
        owner: { nodeId: 'owner', model: 'a' },
        helper: { nodeId: 'helper', model: 'b' },
        slots: 2,
        ttlMs: 1e12,
        probe: false,
        ownerJobMs: 1,
        helperJobMs: 1,
        helperSwitchMs: 0,
        measured: true,
      },
    ]) {
      const res = await fetch(`${c.urls.owner}/router/v1/node/offload/lease`, {
        method: 'POST',
        headers: { authorization: `Bearer lending-test-token-0123456789`, 'content-type': 'application/json' },
        body: JSON.stringify({ owner: { nodeId: 'owner', model: 'a' }, lease }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { param: string } }).error.param).toMatch(/^lease/);
    }
    await eventually(async () => (await c.chat('owner', 'model-a')).status === 200, {
      what: 'the owner still serving',
    });
  });
});

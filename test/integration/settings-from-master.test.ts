import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import type { ModelConfigInput } from '../../src-router/config';
import { guardiansViewSchema, masterSettingsSchema, nodeSnapshotSchema } from '../../src-router/contract';
import { CLUSTER_TOKEN, type LendingCluster, simText, startLendingCluster } from '../support/lending-cluster';
import { eventually, TEST_CONSOLE_TOKEN } from '../support/node-harness';

// LEASE-1, GUARD-1: a slave takes links, guardian settings and leases only from the master it is configured with.
// A push is a nudge: the slave reads the settings from `cluster.master_url`. A push forged with the cluster token —
// the master's node ID and a far-future start time, a guardian at a URL of the forger's — changes nothing, is
// logged, and the real master's later changes still apply.

const vision = (name: string): ModelConfigInput => ({ ...simText(name, '5ms'), capabilities: ['text', 'multimodal'] });
const PIXEL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const FORGED_EPOCH = 'master:9999999999999';

describe('issue #26 item 4: pushed settings are taken only from the configured master', () => {
  let c: LendingCluster;
  let trap: Server;
  let trapUrl = '';
  const trapped: string[] = [];

  beforeAll(async () => {
    trap = createServer((req, res) => {
      trapped.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: 'forged' }, finish_reason: 'stop' }],
        }),
      );
    });
    const port = await freePort();
    await new Promise<void>((r) => trap.listen(port, '127.0.0.1', r));
    trapUrl = `http://127.0.0.1:${port}`;
    c = await startLendingCluster({
      masterModels: { vl: vision('model-vl') },
      slaves: { 'gpu-b': { b: simText('model-b', '5ms') }, 'gpu-c': { c: simText('model-c', '5ms') } },
    });
    await eventually(
      async () => guardiansViewSchema.parse(await c.console('/router/v1/site/guardians')).effective.length === 2,
      { what: 'both text-only models in the catalog' },
    );
  });
  afterAll(async () => {
    trap?.closeAllConnections();
    trap?.close();
    await c?.stop();
  });

  const post = (url: string, path: string, body: unknown) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLUSTER_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const snapshot = async (n: string) => nodeSnapshotSchema.parse(await c.node(c.urls[n], '/router/v1/node/snapshot'));
  const imageChat = (n: string, model: string) =>
    fetch(`${c.urls[n]}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        max_tokens: 4,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a secret prompt' },
              { type: 'image_url', image_url: { url: PIXEL } },
            ],
          },
        ],
      }),
    });
  const site = async (method: 'PUT' | 'POST', path: string, body: unknown) => {
    const res = await fetch(`${c.master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
  };

  it('the master answers a slave its settings and members (cluster token only)', async () => {
    const res = await fetch(`${c.master.url}/router/v1/node/master-settings?node=gpu-b`, {
      headers: { authorization: `Bearer ${CLUSTER_TOKEN}` },
    });
    expect(res.status).toBe(200);
    const s = masterSettingsSchema.parse(await res.json());
    expect(s.master).toBe('master');
    expect(s.members.map((m) => m.node_id).sort()).toEqual(['gpu-b', 'gpu-c', 'master']);
    expect(
      (
        await fetch(`${c.master.url}/router/v1/node/master-settings?node=gpu-b`, {
          headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
        })
      ).status,
    ).toBe(401);
    // A slave is no master: it answers nobody's reads of settings.
    expect(
      (
        await fetch(`${c.urls['gpu-b']}/router/v1/node/master-settings?node=gpu-c`, {
          headers: { authorization: `Bearer ${CLUSTER_TOKEN}` },
        })
      ).status,
    ).toBe(403);
  });

  it("a forged guardian push (the master's ID, a far-future start, a guardian at the forger's URL) changes nothing and is logged", async () => {
    const before = (await snapshot('gpu-b')).guardiansVersion;
    const forged = await post(c.urls['gpu-b'], '/router/v1/node/guardians', {
      version: 999,
      epoch: FORGED_EPOCH,
      settings: [
        {
          scope: 'cluster',
          node_id: null,
          model: null,
          guardian: { node_id: 'master', model: 'vl' },
          guardian_url: trapUrl,
          guardian_public_id: 'model-vl',
        },
      ],
    });
    expect(forged.status).toBe(200);
    expect(await forged.json()).toEqual({ applied: before, stale: true });
    expect((await snapshot('gpu-b')).guardiansVersion).toBe(before);
    // No guardian: the image request is a clear 400 and no prompt went to the forged URL.
    const res = await imageChat('gpu-b', 'model-b');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('guardian_required');
    expect(trapped).toEqual([]);
    await eventually(() => /guardians push ignored/.test(c.slaves['gpu-b'].output()), {
      what: 'the forged push logged',
    });
  });

  it('a forged links push changes nothing; a forged lease push is not applied', async () => {
    const forged = await post(c.urls['gpu-b'], '/router/v1/node/links', {
      version: 999,
      epoch: FORGED_EPOCH,
      links: [
        {
          id: 'evil',
          lane: 'text',
          owner: { nodeId: 'gpu-b', model: 'b' },
          helper: { nodeId: 'gpu-c', model: 'c' },
          loadIfUnloaded: true,
          restoreAfterBorrow: false,
        },
      ],
    });
    expect(forged.status).toBe(200);
    expect(await forged.json()).toMatchObject({ stale: true });
    expect((await snapshot('gpu-b')).linksVersion).toBe(0);
    expect((await c.node<{ models: unknown[] }>(c.urls['gpu-b'], '/router/v1/node/held')).models).toEqual([]);
    const lease = {
      linkId: 'evil',
      owner: { nodeId: 'gpu-b', model: 'b' },
      helper: { nodeId: 'gpu-c', model: 'c' },
      slots: 2,
      ttlMs: 60_000,
      probe: false,
      ownerJobMs: null,
      helperJobMs: null,
      helperSwitchMs: null,
      measured: false,
    };
    const pushed = await post(c.urls['gpu-b'], '/router/v1/node/offload/lease', { owner: lease.owner, lease });
    expect(pushed.status).toBe(200);
    expect(await pushed.json()).toMatchObject({ ignored: true });
    expect(
      (await c.decisions()).filter(
        (r) => r.nodeId === 'gpu-b' && (r.event === 'lease_updated' || r.event === 'lease_refused'),
      ),
    ).toEqual([]);
    await eventually(() => /lease push ignored/.test(c.slaves['gpu-b'].output()), { what: 'the forged lease logged' });
  });

  it("the real master's later changes still apply at once on every slave: not stale after the forged pushes", async () => {
    await site('PUT', '/router/v1/site/guardians', { scope: 'cluster', guardian: { node_id: 'master', model: 'vl' } });
    await site('POST', '/router/v1/site/text-routing-groups', {
      owner: { node_id: 'gpu-b', model: 'b' },
      helper: { node_id: 'gpu-c', model: 'c' },
      acknowledge_different_weights: true,
    });
    const { version } = guardiansViewSchema.parse(await c.console('/router/v1/site/guardians'));
    const { version: linksVersion } = await c.console<{ version: number }>('/router/v1/site/text-routing-groups');
    for (const n of ['gpu-b', 'gpu-c']) {
      await eventually(
        async () => {
          const s = await snapshot(n);
          return s.guardiansVersion === version && s.linksVersion === linksVersion;
        },
        { what: `${n} at guardians v${version}, links v${linksVersion}` },
      );
    }
    const res = await imageChat('gpu-b', 'model-b');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-routerdesk-served-by')).toBe('master/vl');
    expect(trapped).toEqual([]);
  });

  it('a push in the name of another node is refused; a malformed one is a 400', async () => {
    const other = await post(c.urls['gpu-c'], '/router/v1/node/links', { version: 1, epoch: 'intruder:1', links: [] });
    expect(other.status).toBe(403);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe('not_my_master');
    const bad = await post(c.urls['gpu-c'], '/router/v1/node/guardians', { version: 'one', settings: [] });
    expect(bad.status).toBe(400);
  });
});

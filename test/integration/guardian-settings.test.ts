import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GuardiansView,
  guardianSettingSchema,
  guardiansViewSchema,
  lendingViewSchema,
  nodeSnapshotSchema,
} from '../../src-router/contract';
import { CLUSTER_TOKEN, type LendingCluster, simText, startLendingCluster } from '../support/lending-cluster';
import { eventually, TEST_CONSOLE_TOKEN } from '../support/node-harness';

// Guardian settings (GUARD-1, issue #10) on real nodes: the site API on the master (operator writes, every 400 with
// the field at fault), 409 on a slave, the push to slaves (each reports the master's version, seen in the Lending
// view) and a slave refusing a push from a node that is not its master.

const OPERATOR = 'guardian-operator-token-0123456789';
const PATH = '/router/v1/site/guardians';
const simVision = (name: string) => ({
  ...simText(name, '5ms'),
  capabilities: ['text', 'multimodal'] as ('text' | 'multimodal')[],
});

describe('guardian settings', () => {
  let c: LendingCluster;
  beforeAll(async () => {
    c = await startLendingCluster({
      masterModels: { a: simText('model-a', '5ms'), vl: simVision('model-vl') },
      slaves: {
        'gpu-b': { b: simText('model-b', '5ms'), 'vl-b': simVision('model-vl-b') },
        'gpu-c': { c: simText('model-c', '5ms') },
      },
      masterConsole: { operators: [OPERATOR] },
    });
    // The catalog holds every node's models before the test goes on.
    await eventually(async () => guardiansViewSchema.parse(await c.console(PATH)).effective.length === 3, {
      what: 'every text-only model in the catalog',
    });
  });
  afterAll(() => c?.stop());

  const site = (url: string, method: 'PUT' | 'DELETE', body: unknown, token = OPERATOR) =>
    fetch(`${url}${PATH}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({
      status: r.status,
      body:
        r.status === 204
          ? null
          : ((await r.json()) as { error?: { code: string; param: string | null; message: string } }),
    }));
  const view = async (): Promise<GuardiansView> => guardiansViewSchema.parse(await c.console(PATH));
  const effectiveOf = (v: GuardiansView, nodeId: string, model: string) =>
    v.effective.find((e) => e.node_id === nodeId && e.model === model);
  const VL = { node_id: 'master', model: 'vl' };
  const VL_B = { node_id: 'gpu-b', model: 'vl-b' };

  it('GET lists every text-only model with no guardian, the candidates and the nodes', async () => {
    const v = await view();
    expect(v.settings).toEqual([]);
    expect(v.effective.map((e) => [e.node_id, e.model, e.public_id, e.guardian, e.from])).toEqual(
      expect.arrayContaining([
        ['master', 'a', 'model-a', null, null],
        ['gpu-b', 'b', 'model-b', null, null],
        ['gpu-c', 'c', 'model-c', null, null],
      ]),
    );
    expect(v.candidates.map((x) => x.public_id).sort()).toEqual(['model-vl', 'model-vl-b']);
    expect(v.nodes[0]).toBe('master');
    expect([...v.nodes].sort()).toEqual(['gpu-b', 'gpu-c', 'master']);
  });

  it('PUT sets each scope, the most specific wins; DELETE removes; the version counts every change', async () => {
    const v0 = (await view()).version;
    const put = await site(c.master.url, 'PUT', { scope: 'cluster', guardian: VL });
    expect(put.status).toBe(200);
    expect(guardianSettingSchema.parse(put.body)).toMatchObject({
      scope: 'cluster',
      node_id: null,
      model: null,
      guardian: VL,
    });
    expect((await site(c.master.url, 'PUT', { scope: 'node', node_id: 'gpu-b', guardian: VL_B })).status).toBe(200);
    expect(
      (await site(c.master.url, 'PUT', { scope: 'model', node_id: 'gpu-c', model: 'c', guardian: VL_B })).status,
    ).toBe(200);
    let v = await view();
    expect(v.version).toBe(v0 + 3);
    expect(v.settings.map((s) => s.scope)).toEqual(['cluster', 'node', 'model']);
    expect(effectiveOf(v, 'master', 'a')).toMatchObject({ guardian: VL, from: 'cluster', available: true });
    expect(effectiveOf(v, 'gpu-b', 'b')).toMatchObject({ guardian: VL_B, from: 'node' });
    expect(effectiveOf(v, 'gpu-c', 'c')).toMatchObject({ guardian: VL_B, from: 'model' });

    // DELETE takes the scope keys in a JSON body.
    expect((await site(c.master.url, 'DELETE', { scope: 'model', node_id: 'gpu-c', model: 'c' })).status).toBe(204);
    v = await view();
    expect(effectiveOf(v, 'gpu-c', 'c')).toMatchObject({ guardian: VL, from: 'cluster' });
    expect(v.version).toBe(v0 + 4);
    const gone = await site(c.master.url, 'DELETE', { scope: 'model', node_id: 'gpu-c', model: 'c' });
    expect(gone.status).toBe(404);
    expect(gone.body?.error?.code).toBe('guardian_setting_not_found');
    expect((await view()).version).toBe(v0 + 4);
  });

  it('every refusal is a 400 naming the field and saying why', async () => {
    const cases: [unknown, string, string, RegExp][] = [
      [
        { scope: 'cluster', guardian: { node_id: 'master', model: 'a' } },
        'guardian_not_multimodal',
        'guardian',
        /cannot read images.*multimodal/,
      ],
      [
        { scope: 'cluster', guardian: { node_id: 'master', model: 'nope' } },
        'guardian_not_found',
        'guardian',
        /no model 'nope' on node 'master'/,
      ],
      [{ scope: 'node', node_id: 'gpu-z', guardian: VL }, 'node_not_found', 'node_id', /no node 'gpu-z'/],
      [
        { scope: 'model', node_id: 'gpu-b', model: 'zz', guardian: VL },
        'model_not_found',
        'model',
        /no model 'zz' on node 'gpu-b'/,
      ],
      [
        { scope: 'model', node_id: 'gpu-b', model: 'vl-b', guardian: VL },
        'not_text_only',
        'model',
        /not a text-only model/,
      ],
      [{ scope: 'model', node_id: 'gpu-b', model: 'b' }, 'invalid_request', 'guardian', /./],
    ];
    const before = (await view()).version;
    for (const [body, code, param, message] of cases) {
      const res = await site(c.master.url, 'PUT', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body?.error).toMatchObject({ param });
      if (code !== 'invalid_request') expect(res.body?.error?.code).toBe(code);
      expect(res.body?.error?.message).toMatch(message);
    }
    expect((await view()).version).toBe(before);
  });

  it('writes need an operator token; reads take any console token', async () => {
    const res = await site(c.master.url, 'PUT', { scope: 'cluster', guardian: VL_B }, TEST_CONSOLE_TOKEN);
    expect(res.status).toBe(403);
    expect(res.body?.error?.code).toBe('not_an_operator');
    expect((await site(c.master.url, 'DELETE', { scope: 'cluster' }, TEST_CONSOLE_TOKEN)).status).toBe(403);
    expect((await view()).settings.find((s) => s.scope === 'cluster')?.guardian).toEqual(VL);
  });

  it('a slave refuses site writes with 409: the master keeps guardian settings', async () => {
    const res = await site(c.urls['gpu-b'], 'PUT', { scope: 'cluster', guardian: VL_B }, TEST_CONSOLE_TOKEN);
    expect(res.status).toBe(409);
    expect(res.body?.error).toMatchObject({ code: 'guardians_on_master' });
    expect(res.body?.error?.message).toMatch(/kept by the master/);
  });

  it("every slave runs the master's version: in its snapshot and in the Lending view's node rows", async () => {
    const version = (await view()).version;
    for (const n of ['gpu-b', 'gpu-c']) {
      await eventually(
        async () =>
          nodeSnapshotSchema.parse(await c.node(c.urls[n], '/router/v1/node/snapshot')).guardiansVersion === version,
        { what: `${n} applied version ${version}` },
      );
    }
    await eventually(
      async () => {
        const { nodes } = lendingViewSchema.parse(await c.console('/router/v1/console/lending'));
        return nodes.length === 3 && nodes.every((n) => n.guardiansVersion === version);
      },
      { what: 'the Lending view showing every node at the master version' },
    );
    // The slave's own view is what it applied: the settings the master pushed, guardians' public IDs included.
    const slaveView = guardiansViewSchema.parse(
      await fetch(`${c.urls['gpu-b']}${PATH}`, { headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` } }).then(
        (r) => r.json(),
      ),
    );
    expect(slaveView.version).toBe(version);
    expect(slaveView.settings.map((s) => [s.scope, s.node_id, s.guardian])).toEqual([
      ['cluster', null, VL],
      ['node', 'gpu-b', VL_B],
    ]);
  });

  const push = (url: string, body: unknown) =>
    fetch(`${url}/router/v1/node/guardians`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLUSTER_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const forgedSettings = [
    {
      scope: 'cluster',
      node_id: null,
      model: null,
      guardian: VL_B,
      guardian_url: null,
      guardian_public_id: 'model-vl-b',
    },
  ];

  it('a slave refuses a push from a node that is not its master, and an older run of its master', async () => {
    const version = (await view()).version;
    const forged = await push(c.urls['gpu-c'], {
      version: 999,
      epoch: 'intruder:9999999999999',
      settings: forgedSettings,
    });
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('not_my_master');
    const old = await push(c.urls['gpu-c'], { version: 999, epoch: 'master:1', settings: forgedSettings });
    expect(old.status).toBe(200);
    expect(await old.json()).toEqual({ applied: version, stale: true });
    expect(nodeSnapshotSchema.parse(await c.node(c.urls['gpu-c'], '/router/v1/node/snapshot')).guardiansVersion).toBe(
      version,
    );
    // A master never takes pushed settings.
    const toMaster = await push(c.master.url, { version: 999, epoch: 'intruder:1', settings: forgedSettings });
    expect(toMaster.status).toBe(403);
    expect(((await toMaster.json()) as { error: { code: string } }).error.code).toBe('wrong_role');
  });
});

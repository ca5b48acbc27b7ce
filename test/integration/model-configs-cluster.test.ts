import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLUSTER_TOKEN, type LendingCluster, simText, startLendingCluster } from '../support/lending-cluster';
import { eventually, TEST_CONSOLE_TOKEN } from '../support/node-harness';

// A slave's models folder changed through its console API: the master's merged catalog and the slave's snapshot
// follow without a restart, a client of the master is served by the new model, a changed config keeps its cluster ID,
// and a removed one leaves the catalog.

interface CatalogModel {
  id: string;
  configHash: string;
  replicas: { nodeId: string; localId: string }[];
}
interface SnapshotModel {
  publicId: string;
  localId: string;
  configHash: string;
  contextsize: number | null;
}

describe("issue #28 item 2: a master and a slave follow a slave's model config change", () => {
  let c: LendingCluster;
  const slaveApi = (path: string, method: string, body?: unknown) =>
    fetch(`${c.urls.gpu}/router/v1/console/model-configs${path}`, {
      method,
      headers: {
        authorization: `Bearer ${TEST_CONSOLE_TOKEN}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
  const catalog = async () =>
    (await c.master.console<{ models: CatalogModel[] }>('/router/v1/console/cluster/models')).models;
  const snapshot = async () =>
    (await c.node<{ models: SnapshotModel[] }>(c.urls.gpu, '/router/v1/node/snapshot')).models;

  beforeAll(async () => {
    c = await startLendingCluster({
      masterModels: { home: simText('home-model', '2ms') },
      slaves: { gpu: { first: simText('first-model', '2ms') } },
      cluster: { health_interval: '60s', sync_interval: '60s' },
    });
  });
  afterAll(async () => {
    await c?.stop();
  });

  it("a model created on the slave is in its snapshot and the master's catalog, and serves the master's clients", async () => {
    expect(CLUSTER_TOKEN).toBeTruthy();
    const res = await slaveApi('', 'POST', { config: simText('second-model', '2ms') });
    expect(res.status).toBe(201);
    expect((await snapshot()).map((m) => m.publicId).sort()).toEqual(['first-model', 'second-model']);
    // The intervals are 60 s: the slave registers at once after the change, and the master polls it then.
    const entry = await eventually(async () => (await catalog()).find((m) => m.id === 'second-model'), {
      what: "the master's catalog",
    });
    expect(entry.replicas).toEqual([expect.objectContaining({ nodeId: 'gpu', localId: 'second-model' })]);
    const answer = await c.chat('master', 'second-model');
    expect(answer.status).toBe(200);
    expect(answer.body.model).toBe('second-model');
    // A link can name it at once, and the slave enrols it (its router queue) without a restart.
    await c.link('text', ['master', 'home'], ['gpu', 'second-model']);
  });

  it('a changed config reaches the master under the same cluster ID', async () => {
    const before = (await catalog()).find((m) => m.id === 'second-model')!;
    const res = await slaveApi('/second-model', 'PUT', {
      config: { ...simText('second-model', '2ms'), contextsize: 2048 },
    });
    expect(res.status).toBe(200);
    const mine = (await snapshot()).find((m) => m.publicId === 'second-model')!;
    expect(mine.contextsize).toBe(2048);
    const entry = await eventually(async () => (await catalog()).find((m) => m.configHash === mine.configHash), {
      what: 'the new config on the master',
    });
    expect(entry.id).toBe('second-model');
    expect(entry.configHash).not.toBe(before.configHash);
    expect((await catalog()).filter((m) => m.id.startsWith('second-model')).map((m) => m.id)).toEqual(['second-model']);
    expect((await c.chat('master', 'second-model')).status).toBe(200);
  });

  it("a removed config leaves the slave's snapshot and the master's catalog", async () => {
    const res = await slaveApi('/second-model', 'DELETE');
    expect(res.status).toBe(200);
    expect((await snapshot()).map((m) => m.publicId)).toEqual(['first-model']);
    await eventually(async () => !(await catalog()).some((m) => m.id === 'second-model'), {
      what: 'the model gone from the master',
    });
    // The link that names it no longer enrols it: the slave's lending state leaves it out.
    const state = await c.node<{ models: { model: string }[] }>(c.urls.gpu, '/router/v1/node/offload/state');
    expect(state.models.map((m) => m.model)).not.toContain('second-model');
    expect((await c.chat('master', 'second-model')).status).toBe(404);
  });

  it('created again, it is enrolled by the link that names it and served', async () => {
    expect((await slaveApi('', 'POST', { config: simText('second-model', '2ms') })).status).toBe(201);
    await eventually(
      async () =>
        (await c.node<{ models: { model: string }[] }>(c.urls.gpu, '/router/v1/node/offload/state')).models.some(
          (m) => m.model === 'second-model',
        ),
      { what: 'enrolled again' },
    );
    await eventually(async () => (await catalog()).some((m) => m.id === 'second-model'), {
      what: "back in the master's catalog",
    });
    expect((await c.chat('master', 'second-model')).status).toBe(200);
  });
});

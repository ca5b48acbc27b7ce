import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { freePort } from '../../src-router/backends';
import type { ModelConfigInput } from '../../src-router/config';
import { clusterModelSchema, consoleModelListSchema, nodeSnapshotSchema } from '../../src-router/contract';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';

// ID-1: every model of the master's catalog says where its config came from — this node's config file, another
// node, a static route, a recipe — in the console's cluster catalog and the Models table's API. Real processes.
const TOKEN = 'record-source-token-0123456789';
const sim = (name: string, capabilities: ModelConfigInput['capabilities'] = ['text']): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities,
  sim: { load_time: '10ms', token_time: '1ms' },
});
const catalogSchema = z.object({ models: z.array(clusterModelSchema) }).strict();

describe('record source (ID-1)', () => {
  let master: TestNode;
  let slave: TestNode;

  beforeAll(async () => {
    const [mp, sp] = [await freePort(), await freePort()];
    const url = (p: number) => `http://127.0.0.1:${p}`;
    [slave, master] = await Promise.all([
      startNode({
        models: { ears: sim('ears', ['transcription']), shared: sim('shared') },
        config: {
          server: { port: sp },
          cluster: {
            role: 'slave',
            node_id: 'gpu-a',
            token: TOKEN,
            master_url: url(mp),
            public_url: url(sp),
            sync_interval: '300ms',
          },
        },
      }),
      startNode({
        models: { chatty: sim('chatty'), shared: sim('shared') },
        config: {
          server: { port: mp },
          cluster: { role: 'master', node_id: 'master', token: TOKEN, slave_urls: [url(sp)], health_interval: '300ms' },
          routing: {
            static_routes: { 'ext-model': { engine: 'clutch-layers', endpoints: ['http://127.0.0.1:9/v1'] } },
          },
        },
      }),
    ]);
    await eventually(
      async () => (await master.console<{ models: unknown[] }>('/router/v1/console/cluster/models')).models.length >= 4,
      { what: 'the slave in the catalog' },
    );
    const put = await fetch(`${master.url}/router/v1/site/recipes/duo`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        components: [
          { role: 'text', nodeId: 'master', model: 'chatty', backend: 'sim' },
          { role: 'transcription', nodeId: 'gpu-a', model: 'ears', backend: 'sim' },
        ],
      }),
    });
    expect(put.status).toBe(201);
  });
  afterAll(async () => {
    await Promise.all([master?.stop(), slave?.stop()]);
  });

  it('the cluster catalog names each model’s source: config file, remote node, static route, recipe', async () => {
    const { models } = catalogSchema.parse(await master.console('/router/v1/console/cluster/models'));
    const byId = Object.fromEntries(models.map((m) => [m.id, m]));
    expect(byId.chatty).toMatchObject({
      source: 'config_file',
      replicas: [{ nodeId: 'master', localId: 'chatty', source: 'config_file' }],
    });
    expect(byId.ears).toMatchObject({
      source: 'remote_node',
      replicas: [{ nodeId: 'gpu-a', localId: 'ears', source: 'remote_node' }],
    });
    // One ID served by both nodes: this node's replica decides the entry's source; each replica keeps its own.
    expect(byId.shared.source).toBe('config_file');
    expect(byId.shared.replicas.map((r) => [r.nodeId, r.source]).sort()).toEqual([
      ['gpu-a', 'remote_node'],
      ['master', 'config_file'],
    ]);
    expect(byId['ext-model']).toMatchObject({ source: 'static_route', replicas: [], modelHash: null });
    expect(byId['ext-model'].configHash).toMatch(/^[0-9a-f]{64}$/);
    expect(byId.duo).toMatchObject({
      source: 'recipe',
      capabilities: ['text', 'transcription'],
      replicas: [
        { nodeId: 'master', localId: 'chatty', source: 'config_file', available: true },
        { nodeId: 'gpu-a', localId: 'ears', source: 'remote_node', available: true },
      ],
    });
  });

  it('the Models table’s API marks this node’s models as config files', async () => {
    const list = consoleModelListSchema.parse(await master.console('/router/v1/console/models'));
    expect(list.models.map((m) => [m.localId, m.source])).toEqual([
      ['chatty', 'config_file'],
      ['shared', 'config_file'],
    ]);
  });

  it('mixed versions: a slave leaves source out of its snapshot (an older master’s strict schema refuses unknown keys); a record without one parses', async () => {
    const res = await fetch(`${slave.url}/router/v1/node/snapshot`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const snapshot = nodeSnapshotSchema.parse(await res.json());
    expect(snapshot.models.map((m) => m.localId).sort()).toEqual(['ears', 'shared']);
    for (const m of snapshot.models) expect(m).not.toHaveProperty('source');
    const record = { ...snapshot.models[0], source: 'recipe' };
    expect(nodeSnapshotSchema.parse({ ...snapshot, models: [record] }).models[0].source).toBe('recipe');
    expect(nodeSnapshotSchema.safeParse({ ...snapshot, models: [{ ...record, source: 'somewhere' }] }).success).toBe(
      false,
    );
  });
});

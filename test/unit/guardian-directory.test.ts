import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { type NodeConfigInput, nodeConfigSchema } from '../../src-router/config';
import type { NodeModelRecord } from '../../src-router/contract';
import { createGuardianWiring } from '../../src-router/node-guardians';
import { ClusterCatalog } from '../../src-router/registry';
import { ClusterStore, openStore } from '../../src-router/store';
import { tempDir } from '../support/node-harness';

// The GuardianDirectory the executor asks (executor.deps.guardians, GUARD-1): on a master or standalone node from
// the store and the catalog; on a slave from what it read from its master, each guardian's URL from the master's
// member list (a guardian on the master answering at the URL the slave is configured with).

const record = (localId: string, capabilities: string[]): NodeModelRecord => ({
  publicId: `model-${localId}`,
  localId,
  backend: 'sim',
  capabilities,
  lane: 'text',
  configHash: localId,
  modelHash: null,
  contextsize: 4096,
  parallel: 1,
  engine: null,
  available: true,
});
const log = { warn: () => undefined } as unknown as FastifyBaseLogger;

function wiring(cluster: NodeConfigInput['cluster']) {
  const db = openStore(tempDir());
  const config = nodeConfigSchema.parse({
    cluster: { store_dir: tempDir(), ...cluster },
    models: { config_dir: tempDir() },
  });
  const catalog = new ClusterCatalog(new ClusterStore(db));
  const w = createGuardianWiring({ config, db, catalog, log });
  return { w, catalog, db };
}

describe('guardian directory', () => {
  it('a standalone node answers from its store: the most specific setting, the guardian here (no URL), its public ID', () => {
    const { w, catalog } = wiring({ role: 'standalone', node_id: 'solo' });
    catalog.update([
      {
        nodeId: 'solo',
        local: true,
        healthy: true,
        url: null,
        records: [record('a', ['text']), record('vl', ['text', 'multimodal'])],
      },
    ]);
    expect(w.directory.guardianFor({ nodeId: 'solo', model: 'a' })).toBeNull();
    w.store.put({ scope: 'cluster', nodeId: null, model: null, guardian: { nodeId: 'solo', model: 'vl' } });
    // The request path reads what the wiring was told changed.
    w.changed();
    expect(w.directory.guardianFor({ nodeId: 'solo', model: 'a' })).toEqual({
      guardian: { nodeId: 'solo', model: 'vl' },
      from: 'cluster',
      url: null,
      publicId: 'model-vl',
    });
    expect(w.version()).toBe(1);
  });

  it("a slave answers from its master's settings, guardian URLs from the member list, and keeps them across a restart", async () => {
    const cluster = {
      role: 'slave' as const,
      node_id: 'gpu-b',
      token: 'guardian-test-token-0123456789',
      master_url: 'http://master:9/',
      public_url: 'http://gpu-b:9',
    };
    const { w, db } = wiring(cluster);
    const settings = [
      {
        scope: 'cluster' as const,
        node_id: null,
        model: null,
        guardian: { node_id: 'master', model: 'vl' },
        guardian_url: null,
        guardian_public_id: 'model-vl',
      },
      {
        scope: 'model' as const,
        node_id: 'gpu-b',
        model: 'b',
        guardian: { node_id: 'gpu-b', model: 'vl-b' },
        guardian_url: null,
        guardian_public_id: 'model-vl-b',
      },
      // A URL in a setting is never used: the member list says where gpu-d answers.
      {
        scope: 'node' as const,
        node_id: 'gpu-c',
        model: null,
        guardian: { node_id: 'gpu-d', model: 'vl-d' },
        guardian_url: 'http://evil:9',
        guardian_public_id: 'model-vl-d',
      },
      {
        scope: 'model' as const,
        node_id: 'gpu-c',
        model: 'z',
        guardian: { node_id: 'nobody', model: 'vl' },
        guardian_url: 'http://evil:9',
        guardian_public_id: 'model-vl',
      },
    ];
    const members = [
      { node_id: 'master', url: null },
      { node_id: 'gpu-b', url: 'http://gpu-b:9' },
      { node_id: 'gpu-d', url: 'http://gpu-d:9' },
    ];
    expect(w.directory.guardianFor({ nodeId: 'gpu-b', model: 'x' })).toBeNull();
    expect(w.applyPulled({ version: 5, epoch: 'master:100', settings }, members, 'master')).toBe(true);
    expect(w.applyPulled({ version: 5, epoch: 'master:100', settings }, members, 'master')).toBe(false);
    expect(w.version()).toBe(5);
    expect(w.directory.guardianFor({ nodeId: 'gpu-b', model: 'x' })).toEqual({
      guardian: { nodeId: 'master', model: 'vl' },
      from: 'cluster',
      url: 'http://master:9',
      publicId: 'model-vl',
    });
    expect(w.directory.guardianFor({ nodeId: 'gpu-b', model: 'b' })).toEqual({
      guardian: { nodeId: 'gpu-b', model: 'vl-b' },
      from: 'model',
      url: null,
      publicId: 'model-vl-b',
    });
    expect(w.directory.guardianFor({ nodeId: 'gpu-c', model: 'c' })).toMatchObject({
      from: 'node',
      url: 'http://gpu-d:9',
    });
    expect(w.directory.guardianFor({ nodeId: 'gpu-c', model: 'z' })).toMatchObject({ from: 'model', url: null });

    const config = nodeConfigSchema.parse({
      cluster: { store_dir: tempDir(), ...cluster },
      models: { config_dir: tempDir() },
    });
    const again = createGuardianWiring({ config, db, catalog: new ClusterCatalog(new ClusterStore(db)), log });
    expect(again.directory.guardianFor({ nodeId: 'gpu-b', model: 'x' })?.url).toBe('http://master:9');
    expect(again.version()).toBe(5);
  });
});

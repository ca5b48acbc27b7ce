import { describe, expect, it } from 'vitest';
import type { FastifyBaseLogger } from 'fastify';
import { nodeConfigSchema, type NodeConfigInput } from '../../src-router/config';
import type { NodeModelRecord } from '../../src-router/contract';
import { createGuardianWiring } from '../../src-router/node-guardians';
import { ClusterCatalog } from '../../src-router/registry';
import { ClusterStore, openStore } from '../../src-router/store';
import { tempDir } from '../support/node-harness';

// The GuardianDirectory the executor asks (executor.deps.guardians, GUARD-1): on a master or standalone node from
// the store and the catalog; on a slave from what its master pushed, a guardian on the master answering at the URL
// the slave registered with.

const record = (localId: string, capabilities: string[]): NodeModelRecord => ({
  publicId: `model-${localId}`, localId, backend: 'sim', capabilities, lane: 'text', configHash: localId, modelHash: null, contextsize: 4096, parallel: 1, engine: null, available: true,
});
const log = { warn: () => undefined } as unknown as FastifyBaseLogger;

function wiring(cluster: NodeConfigInput['cluster'], masterId: string | null = null) {
  const db = openStore(tempDir());
  const config = nodeConfigSchema.parse({ cluster: { store_dir: tempDir(), ...cluster }, models: { config_dir: tempDir() } });
  const catalog = new ClusterCatalog(new ClusterStore(db));
  const w = createGuardianWiring({ config, db, catalog, log, masterId: async () => masterId });
  return { w, catalog, db };
}

describe('guardian directory', () => {
  it('a standalone node answers from its store: the most specific setting, the guardian here (no URL), its public ID', () => {
    const { w, catalog } = wiring({ role: 'standalone', node_id: 'solo' });
    catalog.update([{ nodeId: 'solo', local: true, healthy: true, url: null, records: [record('a', ['text']), record('vl', ['text', 'multimodal'])] }]);
    expect(w.directory.guardianFor({ nodeId: 'solo', model: 'a' })).toBeNull();
    w.store.put({ scope: 'cluster', nodeId: null, model: null, guardian: { nodeId: 'solo', model: 'vl' } });
    // The request path reads what the wiring was told changed.
    w.changed();
    expect(w.directory.guardianFor({ nodeId: 'solo', model: 'a' })).toEqual({ guardian: { nodeId: 'solo', model: 'vl' }, from: 'cluster', url: null, publicId: 'model-vl' });
    expect(w.version()).toBe(1);
  });

  it("a slave answers from its master's push and keeps it across a restart", async () => {
    const cluster = { role: 'slave' as const, node_id: 'gpu-b', token: 'guardian-test-token-0123456789', master_url: 'http://master:9/', public_url: 'http://gpu-b:9' };
    const { w, db } = wiring(cluster, 'master');
    const settings = [
      { scope: 'cluster' as const, node_id: null, model: null, guardian: { node_id: 'master', model: 'vl' }, guardian_url: null, guardian_public_id: 'model-vl' },
      { scope: 'model' as const, node_id: 'gpu-b', model: 'b', guardian: { node_id: 'gpu-b', model: 'vl-b' }, guardian_url: null, guardian_public_id: 'model-vl-b' },
      { scope: 'node' as const, node_id: 'gpu-c', model: null, guardian: { node_id: 'gpu-d', model: 'vl-d' }, guardian_url: 'http://gpu-d:9', guardian_public_id: 'model-vl-d' },
    ];
    expect(await w.applyPushed({ version: 5, epoch: 'intruder:1', settings })).toBe('wrong_master');
    expect(w.directory.guardianFor({ nodeId: 'gpu-b', model: 'x' })).toBeNull();
    expect(await w.applyPushed({ version: 5, epoch: 'master:100', settings })).toBe(true);
    expect(w.version()).toBe(5);
    expect(w.directory.guardianFor({ nodeId: 'gpu-b', model: 'x' })).toEqual({ guardian: { nodeId: 'master', model: 'vl' }, from: 'cluster', url: 'http://master:9', publicId: 'model-vl' });
    expect(w.directory.guardianFor({ nodeId: 'gpu-b', model: 'b' })).toEqual({ guardian: { nodeId: 'gpu-b', model: 'vl-b' }, from: 'model', url: null, publicId: 'model-vl-b' });
    expect(w.directory.guardianFor({ nodeId: 'gpu-c', model: 'c' })).toMatchObject({ from: 'node', url: 'http://gpu-d:9' });
    expect(await w.applyPushed({ version: 4, epoch: 'master:100', settings: [] })).toBe(false);

    const config = nodeConfigSchema.parse({ cluster: { store_dir: tempDir(), ...cluster }, models: { config_dir: tempDir() } });
    const again = createGuardianWiring({ config, db, catalog: new ClusterCatalog(new ClusterStore(db)), log, masterId: async () => 'master' });
    expect(again.directory.guardianFor({ nodeId: 'gpu-b', model: 'x' })?.url).toBe('http://master:9');
    expect(again.version()).toBe(5);
  });
});

import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { Membership } from '../../src-router/cluster/membership';
import type { NodeClient } from '../../src-router/cluster/node-client';
import type { NodeSnapshot } from '../../src-router/contract';
import { ClusterStore, openStore } from '../../src-router/store';
import { tempDir } from '../support/node-harness';

// A slave's change races its re-registration: a registration that arrives while the master's poll of that slave is
// under way (and may have read the snapshot from before the change) is not dropped: the master polls again once that
// poll ends, so it ends up with the slave's snapshot after the change, not at the next health interval.

const URL = 'http://127.0.0.1:9';
const snapshot = (models: string[]): NodeSnapshot => ({
  nodeId: 'gpu',
  role: 'slave',
  publicUrl: URL,
  version: 't',
  settingsHash: 'h',
  startedAt: new Date(0).toISOString(),
  runtimeStatus: true,
  models: models.map((m) => ({
    publicId: m,
    localId: m,
    backend: 'sim',
    capabilities: ['text'],
    lane: 'text',
    configHash: m,
    modelHash: null,
    contextsize: null,
    parallel: null,
    engine: 'sim',
    available: true,
  })),
});
const log = { warn() {}, error() {}, info() {} } as unknown as FastifyBaseLogger;

describe("issue #28: a registration during the master's poll of that slave", () => {
  it('is polled again after the poll under way, so the master ends with the snapshot after the change', async () => {
    // The slave's state, and polls answered only when the test says (what the slave had when the poll read it).
    let current = snapshot(['first']);
    const pending: (() => void)[] = [];
    const client = {
      snapshot: () => {
        const at = current;
        return new Promise<NodeSnapshot>((resolve) => pending.push(() => resolve(at)));
      },
    } as unknown as NodeClient;
    const membership = new Membership({
      localNodeId: 'master',
      slaveUrls: [URL],
      healthIntervalMs: 3_600_000,
      client,
      store: new ClusterStore(openStore(tempDir())),
      log,
      onChange() {},
    });
    const models = () => membership.nodeRecords().flatMap((n) => n.records.map((r) => r.publicId));
    const answerAll = async () => {
      while (pending.length) {
        pending.shift()!();
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const started = membership.start();
    await answerAll();
    await started;
    expect(models()).toEqual(['first']);
    // A change registers; the master's poll reads the slave now (before the second change) and is still under way
    // when the second change registers.
    current = snapshot(['first', 'second']);
    membership.register(current);
    current = snapshot(['first', 'second', 'third']);
    membership.register(current);
    await answerAll();
    expect(models()).toEqual(['first', 'second', 'third']);
    membership.stop();
  });
});

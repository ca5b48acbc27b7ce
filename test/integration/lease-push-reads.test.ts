import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import { CLUSTER_TOKEN, simText } from '../support/lending-cluster';
import { startNode, type TestNode } from '../support/node-harness';

// Issue #26 item 4: a pushed lease is only a nudge — the slave reads the lease its master holds. Anyone with the
// cluster token can push, so the reads it causes are bounded: one read of an owner's lease at a time, every push
// that comes meanwhile sharing the next one. The master here is a plain HTTP peer that answers each lease read
// after a while and counts how many it is asked at once.

describe('issue #26 item 4: a flood of pushes costs the master one read at a time', () => {
  let master: Server;
  let slave: TestNode;
  let inFlight = 0;
  let maxInFlight = 0;
  let reads = 0;
  let snapshotsInFlight = 0;
  let maxSnapshotsInFlight = 0;

  beforeAll(async () => {
    master = createServer((req, res) => {
      if (req.url === '/router/v1/node/snapshot') {
        // The master's node ID, asked while the slave does not know it: this master never gives it.
        snapshotsInFlight++;
        maxSnapshotsInFlight = Math.max(maxSnapshotsInFlight, snapshotsInFlight);
        setTimeout(() => {
          snapshotsInFlight--;
          res
            .writeHead(503, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { message: 'starting', code: 'unavailable' } }));
        }, 150);
        return;
      }
      if (!req.url?.startsWith('/router/v1/node/offload/lease?')) {
        res
          .writeHead(503, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'not here', code: 'unavailable' } }));
        return;
      }
      reads++;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ lease: null }));
      }, 150);
    });
    const port = await freePort();
    await new Promise<void>((r) => master.listen(port, '127.0.0.1', r));
    const slavePort = await freePort();
    slave = await startNode({
      models: { b: simText('model-b', '5ms') },
      config: {
        server: { port: slavePort },
        cluster: {
          role: 'slave',
          node_id: 'gpu-b',
          token: CLUSTER_TOKEN,
          master_url: `http://127.0.0.1:${port}`,
          public_url: `http://127.0.0.1:${slavePort}`,
        } as never,
      },
    });
  });
  afterAll(async () => {
    await slave?.stop();
    master?.closeAllConnections();
    master?.close();
  });

  it("30 concurrent pushes: every one answered from the master's lease, never more than one read at the master at once", async () => {
    const lease = {
      linkId: 'forged',
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
    const push = () =>
      fetch(`${slave.url}/router/v1/node/offload/lease`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CLUSTER_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ owner: lease.owner, lease }),
      });
    const answers = await Promise.all(Array.from({ length: 30 }, push));
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(await a.json()).toMatchObject({ applied: true, ignored: true });
    }
    expect(reads).toBeGreaterThan(0);
    expect(maxInFlight).toBe(1);
  });

  it("30 concurrent links pushes while the master's node ID is unknown: all refused, one lookup of it at a time", async () => {
    const push = () =>
      fetch(`${slave.url}/router/v1/node/links`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CLUSTER_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ version: 1, epoch: 'master:1', links: [] }),
      });
    const answers = await Promise.all(Array.from({ length: 30 }, push));
    for (const a of answers) {
      expect(a.status).toBe(403);
      expect(((await a.json()) as { error: { code: string } }).error.code).toBe('not_my_master');
    }
    expect(maxSnapshotsInFlight).toBe(1);
  });
});

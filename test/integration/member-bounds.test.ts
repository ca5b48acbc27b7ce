import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEMBER_BOUNDS } from '../../src-router/cluster/member-bounds';
import type { ClusterNodeView } from '../../src-router/contract';
import { SCRAPES_PER_HOST } from '../../src-router/routing';
import { type FakeSlave, fakeRecord, startFakeSlave } from '../support/fake-slave';
import { eventually, startNode, type TestNode } from '../support/node-harness';

// A member that advertises thousands of models, one over-long ID and more replicas of one ID than a node would have:
// the master takes a bounded catalog from it (saying what it dropped, in the member's row and its log) and scrapes it
// a bounded number of times per interval, so the work a member can make the master do is bounded whatever it says.

const CLUSTER_TOKEN = 'member-bounds-cluster-token-0123456789';
const ADVERTISED = 4_000;
const METRICS = '/router/v1/node/engine-metrics/';

describe('what a member may make the master do is bounded', () => {
  let fake: FakeSlave;
  let master: TestNode;

  beforeAll(async () => {
    const models = [
      fakeRecord('x'.repeat(100_000), 'long'),
      ...Array.from({ length: 20 }, (_, i) => fakeRecord('dup', `dup-${i}`)),
      ...Array.from({ length: ADVERTISED }, (_, i) => fakeRecord(`m${i}`)),
    ];
    // Every pod answers its engine metrics (as if all 4,000 engines ran).
    fake = await startFakeSlave({
      nodeId: 'greedy',
      models,
      route: (_req, res, path) => {
        if (!path.startsWith(METRICS)) return false;
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('# no samples\n');
        return true;
      },
      track: (path) => path.startsWith(METRICS),
    });
    master = await startNode({
      models: {},
      config: {
        cluster: {
          role: 'master',
          node_id: 'master',
          token: CLUSTER_TOKEN,
          slave_urls: [fake.url],
          health_interval: '400ms',
        },
        routing: { scrape_interval: '1s' },
      },
    });
    expect(await fake.register(master.url, CLUSTER_TOKEN)).toBe(200);
  });
  afterAll(async () => {
    await master?.stop();
    await fake?.stop();
  });

  const member = async () =>
    (await master.console<{ nodes: ClusterNodeView[] }>('/router/v1/console/cluster/nodes')).nodes.find(
      (n) => n.nodeId === 'greedy',
    );

  it('takes at most 256 of 4,021 advertised records, saying what it dropped and why, in the row and the log', async () => {
    const row = await eventually(
      async () => {
        const m = await member();
        return m?.healthy && m;
      },
      { timeoutMs: 20_000, what: 'the member taken in' },
    );
    expect(row.models).toBe(MEMBER_BOUNDS.models);
    expect(row.warnings).toEqual([
      '1 model record dropped: publicId longer than 256 characters',
      '4 model records dropped: more than 16 share a public ID',
      `advertised ${ADVERTISED + 21} model records; only the first 256 are taken (3760 dropped)`,
    ]);
    const ids = ((await (await fetch(`${master.url}/v1/models`)).json()) as { data: { id: string }[] }).data.map(
      (m) => m.id,
    );
    expect(ids).toHaveLength(1 + 240);
    expect(ids).toContain('dup');
    expect(ids).toContain('m239');
    expect(ids).not.toContain('m240');
    await eventually(() => master.output().includes("member's models not all taken"), { what: 'the log line' });
    // Said once, not on every poll.
    await eventually(async () => ((await member())?.lastSeen ?? '') > (row.lastSeen ?? ''), { what: 'a later poll' });
    expect(master.output().split("member's models not all taken").length).toBe(2);
  });

  it('scrapes the member at most 16 times at once, interval after interval, and answers /health meanwhile', async () => {
    const pods = await eventually(
      async () => {
        const { pods } = await master.console<{ pods: { podId: string }[] }>('/router/v1/console/runtime.scrape');
        const mine = pods.filter((p) => p.podId.startsWith('greedy/'));
        return mine.length === MEMBER_BOUNDS.models && mine;
      },
      { timeoutMs: 20_000, what: 'scrape targets of the member' },
    );
    expect(pods).toHaveLength(256);
    // The master asks interval after interval, at most 16 at once, and comes to pods beyond the first 16 in turn.
    const scraped = () => [...fake.seen.keys()].filter((p) => p.startsWith(METRICS)).length;
    await eventually(() => scraped() >= 2 * SCRAPES_PER_HOST, { timeoutMs: 30_000, what: 'pods scraped in turn' });
    expect(fake.tracked.mostOpen).toBeGreaterThan(0);
    expect(fake.tracked.mostOpen).toBeLessThanOrEqual(SCRAPES_PER_HOST);
    expect((await fetch(`${master.url}/health`)).status).toBe(200);
  });

  it('refuses a registration body over 4 MiB unread (413)', async () => {
    // The headers announce 5 MiB and nothing more is sent: the answer comes from the announced length alone.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${master.url}/router/v1/node/register`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${CLUSTER_TOKEN}`,
          'content-type': 'application/json',
          'content-length': String(5 * 1024 * 1024),
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(status).toBe(413);
  });
});

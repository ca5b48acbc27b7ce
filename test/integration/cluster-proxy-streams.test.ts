import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ClusterNodeView } from '../../src-router/contract';
import { type FakeSlave, startFakeSlave } from '../support/fake-slave';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';

// The console's cluster proxy streams an answer through and stops when its client leaves, for this node
// (`clusters/local`) and a remote cluster's profile alike: a decision-log export whose member holds its page open
// reaches the client at once (its header), and the client leaving ends the export there, the member's page dropped.

const CLUSTER_TOKEN = 'proxy-streams-cluster-token-0123456789';
const LOCAL_TOKEN = 'proxy-streams-local-token-0123456789';
const EXPORT = 'console/decisions/export?format=csv';

describe('the cluster proxy streams and stops when the client leaves', () => {
  let fake: FakeSlave;
  let master: TestNode;
  let local: TestNode;
  let remoteId = '';

  beforeAll(async () => {
    // A member whose decision pages never come: every export the master gathers waits on it.
    fake = await startFakeSlave({ nodeId: 'held', route: (_req, _res, path) => path === '/router/v1/node/decisions' });
    [master, local] = await Promise.all([
      startNode({
        models: {},
        config: {
          cluster: { role: 'master', node_id: 'master', token: CLUSTER_TOKEN, slave_urls: [fake.url] },
        },
        env: { ROUTERDESK_LOG_LEVEL: 'info' },
      }),
      startNode({ models: {}, config: { console: { token: LOCAL_TOKEN } } }),
    ]);
    await eventually(
      async () =>
        (await master.console<{ nodes: ClusterNodeView[] }>('/router/v1/console/cluster/nodes')).nodes.some(
          (n) => n.nodeId === 'held' && n.healthy,
        ),
      { what: 'the master taking the member in' },
    );
    const added = await fetch(`${local.url}/router/v1/console/clusters`, {
      method: 'POST',
      headers: { authorization: `Bearer ${LOCAL_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'master', url: master.url, token: TEST_CONSOLE_TOKEN }),
    });
    expect(added.status).toBe(201);
    remoteId = ((await added.json()) as { id: string }).id;
  });
  afterAll(async () => {
    await Promise.all([master?.stop(), local?.stop()]);
    await fake?.stop();
  });
  beforeEach(() => {
    fake.closedEarly.clear();
  });

  const held = '/router/v1/node/decisions';

  /**
   * Starts the export at `url`, reads until the CSV header arrives while the member still holds its page (the answer
   * streams), then leaves; the member's page request is closed by the master, which says why.
   */
  async function exportAndLeave(url: string, token: string) {
    const mark = master.output().length;
    const ctl = new AbortController();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: ctl.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let received = '';
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        received += Buffer.from(value).toString();
      }
    })().catch(() => {});
    await eventually(() => received.startsWith('id,') && (fake.open.get(held) ?? 0) > 0, {
      timeoutMs: 20_000,
      what: 'the export header while the member holds its page',
    });
    ctl.abort();
    await reading;
    await eventually(() => (fake.open.get(held) ?? 0) === 0, { timeoutMs: 20_000, what: 'the held page closed' });
    expect(fake.closedEarly.get(held)).toBeGreaterThan(0);
    await eventually(() => master.output().slice(mark).includes('decision export stopped: the client left'), {
      what: 'the master saying the export stopped',
    });
    // Stopped because the client left, not cut off by the member's own timeout.
    expect(master.output().slice(mark)).not.toContain('decision log of node not gathered');
  }

  it('clusters/local: a decision-log export streams through and stops when the client leaves', async () => {
    await exportAndLeave(`${master.url}/router/v1/console/clusters/local/${EXPORT}`, TEST_CONSOLE_TOKEN);
  });

  it("a remote cluster's profile: the export streams through both nodes and stops at the remote", async () => {
    await exportAndLeave(`${local.url}/router/v1/console/clusters/${remoteId}/${EXPORT}`, LOCAL_TOKEN);
  });

  it('clusters/local: a page of the log that has not begun is dropped at the member when the client leaves', async () => {
    const mark = master.output().length;
    const ctl = new AbortController();
    const call = fetch(`${master.url}/router/v1/console/clusters/local/console/decisions`, {
      headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
      signal: ctl.signal,
    }).catch((err: Error) => err);
    await eventually(() => (fake.open.get(held) ?? 0) > 0, {
      timeoutMs: 20_000,
      what: 'the member asked for its page',
    });
    ctl.abort();
    expect(await call).toBeInstanceOf(Error);
    await eventually(() => (fake.open.get(held) ?? 0) === 0, { timeoutMs: 20_000, what: 'the held page closed' });
    expect(fake.closedEarly.get(held)).toBeGreaterThan(0);
    expect(master.output().slice(mark)).not.toContain('decision log of node not gathered');
  });

  it('the export straight from the node stops the same way when its client leaves', async () => {
    await exportAndLeave(`${master.url}/router/v1/${EXPORT}`, TEST_CONSOLE_TOKEN);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfigInput } from '../../src-router/config';
import {
  decisionPageSchema,
  type TimelinePageWire,
  timelineNodeSchema,
  timelinePageSchema,
} from '../../src-router/contract';
import { CLUSTER_TOKEN, type LendingCluster, startLendingCluster } from '../support/lending-cluster';
import { eventually } from '../support/node-harness';

// The lease timeline's rows (GET /router/v1/console/timeline): every node's request and load analytics for a time
// range, gathered by the master like the decision log. A burst to an owner linked to a faster helper lends; the
// helper's row of a lent request names its owner and the request id the owner's `lent` decision row names.
const sim = (name: string, tokenTime: string): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['text'],
  contextsize: 4096,
  parallel: 1,
  sim: { load_time: '100ms', token_time: tokenTime },
});

describe('lease timeline rows of the whole cluster', () => {
  let c: LendingCluster;
  let start = 0;

  beforeAll(async () => {
    start = Date.now();
    c = await startLendingCluster({
      slaves: { owner: { a: sim('model-a', '30ms') }, helper: { b: sim('model-b', '10ms') } },
    });
    for (let i = 0; i < 3; i++) {
      expect((await c.chat('owner', 'model-a')).status).toBe(200);
      expect((await c.chat('helper', 'model-b')).status).toBe(200);
    }
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
    const answers = await Promise.all(Array.from({ length: 10 }, () => c.chat('owner', 'model-a')));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
  });
  afterAll(() => c?.stop());

  const timeline = async (q: Record<string, string>): Promise<TimelinePageWire> =>
    timelinePageSchema.parse(await c.console(`/router/v1/console/timeline?${new URLSearchParams(q)}`));

  it("gathers every node's requests and loads; a lent request is the helper's, naming its owner and the lent row's id", async () => {
    const lentIds = await eventually(
      async () => {
        const page = decisionPageSchema.parse(await c.console('/router/v1/console/decisions?event=lent&limit=1000'));
        return page.rows.length ? page.rows.map((r) => r.requestId) : undefined;
      },
      { what: 'lent rows' },
    );
    const page = await eventually(
      async () => {
        const p = await timeline({ from: String(start), to: String(Date.now()) });
        const helper = p.nodes.find((n) => n.nodeId === 'helper');
        return helper?.requests.some((r) => r.lentFrom !== null) ? p : undefined;
      },
      { what: 'borrowed requests on the helper' },
    );
    expect(page.nodes.map((n) => n.nodeId).sort()).toEqual(['helper', 'master', 'owner']);
    expect(page.missing).toBeUndefined();
    const owner = page.nodes.find((n) => n.nodeId === 'owner')!;
    const helper = page.nodes.find((n) => n.nodeId === 'helper')!;
    // Own work: the warm-up and the part of the burst the owner kept, and its engine's load.
    expect(owner.requests.filter((r) => r.nodeId === 'owner' && r.localId === 'a').length).toBeGreaterThanOrEqual(3);
    expect(owner.loads.some((l) => l.localId === 'a' && l.lane === 'text' && l.success)).toBe(true);
    expect(helper.loads.some((l) => l.localId === 'b')).toBe(true);
    const borrowed = helper.requests.filter((r) => r.lentFrom !== null);
    expect(borrowed.every((r) => r.lentFrom === 'owner/a' && r.localId === 'b')).toBe(true);
    expect(borrowed.every((r) => r.requestId !== null && lentIds.includes(r.requestId))).toBe(true);
    // The owner keeps its own copy of a lent request, recorded as the helper's work (PRICE-2), with the same id.
    const ownerCopies = owner.requests.filter((r) => r.nodeId === 'helper');
    expect(ownerCopies.length).toBeGreaterThan(0);
    expect(ownerCopies.every((r) => borrowed.some((b) => b.requestId === r.requestId))).toBe(true);
    // Oldest first on every node.
    for (const n of page.nodes)
      expect(n.requests.map((r) => r.finishedAt)).toEqual(
        [...n.requests.map((r) => r.finishedAt)].sort((x, y) => x - y),
      );
  });

  it('is bounded by the range and the limit', async () => {
    const before = await timeline({ from: String(start - 60_000), to: String(start - 30_000) });
    expect(before.nodes.every((n) => n.requests.length === 0 && n.loads.length === 0)).toBe(true);
    const one = await timeline({ from: String(start), limit: '1' });
    expect(one.nodes.every((n) => n.requests.length <= 1 && n.loads.length <= 1)).toBe(true);
    expect(one.nodes.find((n) => n.nodeId === 'owner')!.truncated).toBe(true);
  });

  it('refuses a bad range or limit (400 naming the field) and answers a node only with the cluster token', async () => {
    for (const [q, param] of [
      ['from=yesterday', 'from'],
      ['limit=0', 'limit'],
      [`from=${Date.now()}&to=1`, 'from'],
    ] as const) {
      const res = await fetch(`${c.master.url}/router/v1/console/timeline?${q}`, {
        headers: { authorization: `Bearer ${c.master.token}` },
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { param: string } }).error.param).toBe(param);
    }
    expect(
      (
        await fetch(`${c.urls.owner}/router/v1/node/timeline`, {
          headers: { authorization: `Bearer ${c.master.token}` },
        })
      ).status,
    ).toBe(401);
    const own = timelineNodeSchema.parse(await c.node(c.urls.owner, `/router/v1/node/timeline?from=${start}`));
    expect(own.nodeId).toBe('owner');
    expect(CLUSTER_TOKEN).not.toBe(c.master.token);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfigInput } from '../../src-router/config';
import { lendingNodeStateSchema } from '../../src-router/contract';
import { type LendingCluster, startLendingCluster } from '../support/lending-cluster';
import { eventually } from '../support/node-harness';

// The spec's own example (cluster-routing "What is lent"): an owner receives 10 requests for model A; 2 go to A's
// backend, 8 are held and judged for lending; a linked helper gets 2 in flight when it is faster (1 when slower);
// A is always topped back up; every client gets its answer on its own connection; the log shows it all in order.
const sim = (name: string, tokenTime: string): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['text'],
  contextsize: 4096,
  parallel: 1,
  sim: { load_time: '100ms', token_time: tokenTime },
});

interface HeldView {
  nodeId: string;
  models: { model: string; depth: number; active: unknown[]; held: { state: string }[] }[];
}
interface Row {
  kind: string;
  event: string;
  nodeId: string;
  outcome: string | null;
  reason: string | null;
  slots: number | null;
  requestsOut: number | null;
  at: number;
  id: number;
}

function scenario(helperTokenTime: string, expectedSlots: 1 | 2) {
  describe(`owner with 10 requests, helper ${expectedSlots === 2 ? 'faster' : 'slower'} (LEASE-9: ${expectedSlots} slot${expectedSlots === 2 ? 's' : ''})`, () => {
    let c: LendingCluster;
    let maxAtEngine = 0;
    let sawHeld = 0;

    beforeAll(async () => {
      c = await startLendingCluster({
        slaves: { owner: { a: sim('model-a', '30ms') }, helper: { b: sim('model-b', helperTokenTime) } },
      });
      // Own fits first (PRICE-2: min_samples 3), on each node's own model.
      for (let i = 0; i < 3; i++) {
        expect((await c.chat('owner', 'model-a')).status).toBe(200);
        expect((await c.chat('helper', 'model-b')).status).toBe(200);
      }
      await c.link('text', ['owner', 'a'], ['helper', 'b']);
    });
    afterAll(() => c?.stop());

    it('lends held requests, never more than the slots, keeps A topped up, answers every client', async () => {
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const held = await c.node<HeldView>(c.urls.owner, '/router/v1/node/held');
          const a = held.models.find((m) => m.model === 'a')!;
          maxAtEngine = Math.max(maxAtEngine, a.active.length);
          sawHeld = Math.max(sawHeld, a.held.length);
          await new Promise((r) => setTimeout(r, 15));
        }
      })();
      const answers = await Promise.all(Array.from({ length: 10 }, () => c.chat('owner', 'model-a')));
      sampling = false;
      await sampler;
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
      expect(answers.every((a) => a.body.model === 'model-a')).toBe(true);
      expect(maxAtEngine).toBeLessThanOrEqual(2); // QUEUE-1: scheduling_backend_depth 2
      expect(maxAtEngine).toBe(2); // and topped up to it (QUEUE-2)
      expect(sawHeld).toBeGreaterThanOrEqual(6);
      const helperStats = (await (
        await fetch(`${c.urls.helper}/router/v1/console/lanes`, {
          headers: { authorization: `Bearer ${c.master.token}` },
        })
      ).json()) as { lanes: { port: number }[] };
      const simStats = (await (await fetch(`http://127.0.0.1:${helperStats.lanes[0].port}/sim/stats`)).json()) as {
        requests: number;
      };
      expect(simStats.requests).toBeGreaterThan(3); // the helper served lent requests beyond its own 3
    });

    it("every node's lending state, as the master polls it, parses with its contract (LEASE-3), fits included", async () => {
      for (const url of [c.urls.owner, c.urls.helper]) {
        const state = lendingNodeStateSchema.parse(await c.node(url, '/router/v1/node/offload/state'));
        if (url === c.urls.owner) expect(state.models.find((m) => m.model === 'a')?.fit).not.toBeNull();
      }
      // The master reads its own state in-process and answers no poll.
      await expect(c.node(c.master.url, '/router/v1/node/offload/state')).rejects.toThrow(/403.*wrong_role/);
    });

    it('the log shows plan rows on the master and dispatch rows on the owner, in order', async () => {
      const rows = await eventually(
        async () => {
          const page = await c.console<{ rows: Row[] }>('/router/v1/console/decisions?limit=1000');
          return page.rows.some((r) => r.event === 'lent') ? page.rows : undefined;
        },
        { what: 'lent rows gathered' },
      );
      const chronological = [...rows].sort((x, y) => x.at - y.at || x.id - y.id);
      const granted = chronological.filter((r) => r.kind === 'plan' && r.outcome === 'granted');
      expect(granted.length).toBeGreaterThan(0);
      expect(granted.every((r) => r.nodeId === 'master' && r.slots === expectedSlots)).toBe(true);
      const dispatch = chronological.filter((r) => r.kind === 'dispatch' && r.nodeId === 'owner');
      const firstUpdate = dispatch.findIndex((r) => r.event === 'lease_updated');
      const firstLent = dispatch.findIndex((r) => r.event === 'lent');
      expect(firstUpdate).toBeGreaterThanOrEqual(0);
      expect(firstLent).toBeGreaterThan(firstUpdate);
      const lent = dispatch.filter((r) => r.event === 'lent');
      expect(lent.every((r) => (r.requestsOut ?? 0) <= expectedSlots)).toBe(true);
      expect(Math.max(...lent.map((r) => r.requestsOut ?? 0))).toBe(expectedSlots);
      expect(granted[0].at).toBeLessThanOrEqual(lent[0].at + 50);
    });
  });
}

scenario('10ms', 2);
scenario('60ms', 1);

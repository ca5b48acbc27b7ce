import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type HeldView,
  type LendingCluster,
  simText,
  startLendingCluster,
  watchHeld,
} from '../support/lending-cluster';
import { eventually } from '../support/node-harness';

// HOLD-1..3 on real nodes: with a much faster helper leased, the owner's second slot keeps a lendable request for
// the helper while every lent slot is busy; the owner never stops generating (a held request goes to it the moment
// it would idle); streams are never held; every client is answered.
describe('holding a request for a faster helper', () => {
  let c: LendingCluster;
  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: { owner: { a: simText('model-a', '40ms') }, helper: { b: simText('model-b', '25ms') } },
    });
    for (let i = 0; i < 3; i++) {
      expect((await c.chat('owner', 'model-a', { maxTokens: 4 })).status).toBe(200);
      expect((await c.chat('helper', 'model-b', { maxTokens: 4 })).status).toBe(200);
    }
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  });
  afterAll(() => c?.stop());

  it('holds only lendable requests, only while the owner generates, and answers everyone (HOLD-1/2, LLM-4)', async () => {
    const samples: HeldView['models'][number][] = [];
    const w = watchHeld(
      c,
      'owner',
      (v) => {
        const a = v.models.find((m) => m.model === 'a');
        if (a) samples.push(a);
      },
      5,
    );
    const since = Date.now();
    // Bursts until a hold has happened (a hold needs the lease and both lent slots busy at a second-slot turn).
    let bursts = 0;
    const held = await eventually(
      async () => {
        bursts++;
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) => c.chat('owner', 'model-a', { maxTokens: 6, stream: i % 5 === 0 })),
        );
        expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
        const rows = (await c.decisions({ event: 'held_for_helper' })).filter((r) => r.at >= since);
        return rows.length ? rows : undefined;
      },
      { what: 'a request held for the helper', timeoutMs: 30_000, everyMs: 10 },
    );
    await w.stop();
    expect(bursts).toBeGreaterThanOrEqual(1);
    expect(held.every((r) => r.nodeId === 'owner' && r.helperModel === 'b')).toBe(true);
    // The owner never stops generating: whenever a request is held, one is at its engine.
    const withHeld = samples.filter((s) => s.held.some((i) => i.state === 'held'));
    expect(withHeld.every((s) => s.active.length >= 1)).toBe(true);
    // Streams are never held (nor lent).
    expect(
      samples
        .flatMap((s) => s.held)
        .filter((i) => i.stream)
        .every((i) => i.state === 'queued'),
    ).toBe(true);
    // Every held request left the router: nothing is held or queued once the bursts are answered.
    await eventually(
      async () => {
        const a = (await c.node<HeldView>(c.urls.owner, '/router/v1/node/held')).models.find((m) => m.model === 'a')!;
        return a.held.length === 0 && a.active.length === 0;
      },
      { what: 'the owner queue empty' },
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfigInput } from '../../src-router/config';
import {
  type DecisionRowView,
  type HeldView,
  type LendingCluster,
  simText,
  startLendingCluster,
} from '../support/lending-cluster';
import { eventually } from '../support/node-harness';

// PROBE-1..4: a helper the cost rule does not choose still gets a one-request probe once idle from its own work for
// cluster.offload_probe_idle (300 ms here), twelve times as long when it must switch models; probes happen even when
// neither side is priced (min_samples out of reach); when a probe waits only for idleness, the master decides again
// the moment the helper has idled long enough, without another owner event (PROBE-4). The refresh tick is 60 s here,
// so every decision is either an owner event or a probe_due wake-up.

const IDLE_MS = 300;
const simImage = (name: string, stepTime: string): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['image'],
  sim: { load_time: '100ms', step_time: stepTime },
});
const settings = {
  scheduling_min_samples: 1000,
  scheduling_refresh_interval: '60s',
  offload_probe_idle: `${IDLE_MS}ms`,
};

async function image(c: LendingCluster, nodeId: string, model: string, steps: number) {
  const res = await fetch(`${c.urlOf(nodeId)}/v1/images/generations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, prompt: 'a lighthouse', size: '64x64', steps, n: 1 }),
  });
  return { status: res.status, body: (await res.json()) as { data?: unknown[] } };
}

const pairRows = async (c: LendingCluster, since: number) =>
  (await c.decisions({ kind: 'plan' })).filter((r) => r.ownerModel === 'a' && r.helperModel === 'b' && r.at >= since);
const heldOf = async (c: LendingCluster, nodeId: string, model: string) =>
  (await c.node<HeldView>(c.urlOf(nodeId), '/router/v1/node/held')).models.find((m) => m.model === model)!;

async function firstProbe(
  c: LendingCluster,
  since: number,
): Promise<{ probe: DecisionRowView; before: DecisionRowView[] }> {
  return eventually(
    async () => {
      const rows = await pairRows(c, since);
      const i = rows.findIndex((r) => r.outcome === 'probe');
      return i >= 0 ? { probe: rows[i], before: rows.slice(0, i) } : undefined;
    },
    { what: 'a probe plan row', timeoutMs: 15_000 },
  );
}

describe('image link owner/a → helper/b, nothing priced', () => {
  let c: LendingCluster;

  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: {
        owner: { a: simImage('paint-a', '20ms') },
        helper: { b: simImage('paint-b', '10ms'), other: simImage('paint-other', '10ms') },
      },
      cluster: settings,
    });
    await c.link('image', ['owner', 'a'], ['helper', 'b'], { load_if_unloaded: true });
  });
  afterAll(() => c?.stop());

  it('probes an idle helper with one request although neither side is priced (PROBE-1/2)', async () => {
    expect((await image(c, 'helper', 'paint-b', 5)).status).toBe(200); // b loaded: no switch needed
    const since = Date.now();
    const answers = await Promise.all(Array.from({ length: 6 }, () => image(c, 'owner', 'paint-a', 20)));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
    const { probe } = await firstProbe(c, since);
    expect(probe).toMatchObject({ slots: 1, reason: 'owner_unpriced', ownerDrainMs: null, helperServiceMs: null });
    expect(probe.helperIdleMs).toBeGreaterThanOrEqual(IDLE_MS);
    const rows = await pairRows(c, since);
    expect(rows.filter((r) => r.outcome === 'granted')).toEqual([]);
    const dispatch = (await c.decisions({ kind: 'dispatch' })).filter((r) => r.nodeId === 'owner' && r.at >= since);
    expect(dispatch.filter((r) => r.event === 'lease_updated').every((r) => r.slots === 1)).toBe(true);
    const lent = dispatch.filter((r) => r.event === 'lent');
    expect(lent.length).toBeGreaterThan(0);
    expect(lent.every((r) => (r.requestsOut ?? 0) <= 1)).toBe(true); // a probe lends one request at a time
  });

  it('decides again the moment the helper has idled long enough, without another owner event (PROBE-4)', async () => {
    // The helper is busy with its own request while the owner's requests arrive: the probe waits for its idleness.
    const own = image(c, 'helper', 'paint-b', 60);
    await eventually(async () => (await heldOf(c, 'helper', 'b')).active.length === 1, {
      what: 'own request at the helper',
    });
    const since = Date.now();
    // Two long jobs fill the owner's engine (no completion for ~2.4 s), then three short ones are held.
    const long = [image(c, 'owner', 'paint-a', 120), image(c, 'owner', 'paint-a', 120)];
    await eventually(async () => (await heldOf(c, 'owner', 'a')).active.length === 2, { what: 'owner engine full' });
    const short = Array.from({ length: 3 }, () => image(c, 'owner', 'paint-a', 10));
    await eventually(async () => (await pairRows(c, since)).some((r) => r.trigger === 'enqueued' && r.held === 3), {
      what: 'the three held requests decided',
    });
    const lastSent = Date.now();
    expect((await own).status).toBe(200);
    const ownDone = Date.now();
    const { probe, before } = await firstProbe(c, since);
    expect(probe.trigger).toBe('probe_due');
    expect(probe.at).toBeGreaterThan(lastSent);
    expect(probe.helperIdleMs).toBeGreaterThanOrEqual(IDLE_MS);
    expect(probe.at - ownDone).toBeLessThan(IDLE_MS + 1_000); // "the moment it has": no tick (60 s), no owner event
    // Before it: skipped for idleness only, each with the time the probe would be due.
    const waiting = before.filter((r) => r.at >= lastSent);
    expect(
      waiting.every(
        (r) => r.outcome === 'skipped' && r.trigger === 'probe_due' && typeof r.details?.probeDueAt === 'number',
      ),
    ).toBe(true);
    expect(before.filter((r) => r.trigger === 'completed' || r.trigger === 'tick')).toEqual([]);
    expect((await Promise.all([...long, ...short])).map((a) => a.status)).toEqual(Array(5).fill(200));
  });

  it('probes a helper that must switch models only after twelve times the idle time (PROBE-1/3)', async () => {
    // The helper's image lane now holds another model: a probe of b would displace it.
    const started = Date.now();
    expect((await image(c, 'helper', 'paint-other', 5)).status).toBe(200);
    const lanes = async () =>
      (await (
        await fetch(`${c.urls.helper}/router/v1/console/lanes`, {
          headers: { authorization: `Bearer ${c.master.token}` },
        })
      ).json()) as { lanes: { loaded: string | null }[] };
    expect((await lanes()).lanes.map((l) => l.loaded)).toEqual(['other']);
    const otherDone = Date.now();
    const answers = Promise.all(Array.from({ length: 8 }, () => image(c, 'owner', 'paint-a', 60)));
    const { probe, before } = await firstProbe(c, otherDone);
    expect(probe.slots).toBe(1);
    expect(probe.helperIdleMs).toBeGreaterThanOrEqual(12 * IDLE_MS);
    expect(probe.at - started).toBeGreaterThanOrEqual(12 * IDLE_MS);
    expect(probe.at - otherDone).toBeLessThan(12 * IDLE_MS + 1_000);
    // Idle well past the plain threshold, yet not probed: the switch needs 12×.
    const pastPlain = before.filter((r) => (r.helperIdleMs ?? 0) >= IDLE_MS);
    expect(pastPlain.length).toBeGreaterThan(0);
    expect(
      pastPlain.every((r) => r.outcome === 'skipped' && (r.details?.probeDueAt as number) - started >= 12 * IDLE_MS),
    ).toBe(true);
    expect((await answers).map((a) => a.status)).toEqual(Array(8).fill(200));
    expect((await lanes()).lanes.map((l) => l.loaded)).toContain('b'); // the probe switched the lane to b
  });
});

describe('text links, neither side priced (no token profile yet)', () => {
  let c: LendingCluster;

  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: {
        owner: { a: simText('model-a', '50ms') },
        // b's window surely holds a short chat; tiny's 64 tokens cannot hold the bound (bytes + 512 reserve).
        helper: { b: simText('model-b', '10ms') },
        small: { tiny: { ...simText('model-tiny', '10ms'), contextsize: 64 } },
      },
      cluster: settings,
    });
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
    await c.link('text', ['owner', 'a'], ['small', 'tiny']);
  });
  afterAll(() => c?.stop());

  // PROBE-2: probes happen "even when the owner is faster or neither side is priced yet". Before the owner has a
  // token profile the context gate uses a safe bound that needs no measurement (body bytes + the answer's room),
  // so a helper whose window surely holds the work is probed at once; one whose window cannot is not.
  it('probes a helper whose window surely holds the work before any profile; never one whose window is too small', async () => {
    expect((await c.chat('helper', 'model-b')).status).toBe(200);
    expect((await c.chat('small', 'model-tiny')).status).toBe(200);
    const since = Date.now();
    const answers = await Promise.all(Array.from({ length: 6 }, () => c.chat('owner', 'model-a')));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
    const probe = await firstProbe(c, since);
    expect(probe.probe).toMatchObject({ helperNode: 'helper', slots: 1 });
    const lent = await eventually(
      async () => {
        const rows = (await c.decisions({ event: 'lent' })).filter((r) => r.at >= since);
        return rows.length ? rows : undefined;
      },
      { what: 'a lent request' },
    );
    expect(lent.every((r) => r.helperModel === 'b')).toBe(true);
    const tinyRows = (await c.decisions({ kind: 'plan' })).filter((r) => r.helperModel === 'tiny' && r.at >= since);
    expect(tinyRows.length).toBeGreaterThan(0);
    expect(tinyRows.every((r) => r.outcome === 'skipped' && r.reason === 'context_too_small')).toBe(true);
  });
});

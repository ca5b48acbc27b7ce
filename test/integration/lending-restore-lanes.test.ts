import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfigInput } from '../../src-router/config';
import {
  CLUSTER_TOKEN,
  type DecisionRowView,
  type LendingCluster,
  simText,
  startLendingCluster,
} from '../support/lending-cluster';
import { eventually, TEST_CONSOLE_TOKEN } from '../support/node-harness';

// HELPER-4 (restore_after_borrow): after borrowed work displaced the model a lane held, the helper reloads it once
// cluster.offload_restore_delay passes with no borrowed work on EITHER lane and no own work running; its own request
// arriving first cancels the pending restore; a run of consecutive borrowed requests restores what was loaded before
// the run, not an intermediate model. PROBE-3 / PRICE-7: a restore is busy time for the helper's idleness, but not
// "its own request" (no helper_recently_busy because of it).
//
// The tests play the master for borrowed work (worker calls naming the owner); only the last one drives the real
// planner through owner traffic. Helper node: text lane x (its own, slow to load), b and c (linked text helpers) and
// y (its own); image lane q (its own) and p (a linked image helper).

const RESTORE_DELAY_MS = 700;
const simImage = (name: string, stepTime: string): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['image'],
  sim: { load_time: '100ms', step_time: stepTime },
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A plan row as the console returns it (the shared view leaves out the switch time). */
type PlanRowView = DecisionRowView & { helperSwitchMs: number | null };
interface LaneView {
  lane: string;
  loaded: string | null;
  state: string;
  inflight: number;
  queued: number;
  pid: number | null;
}

describe('restores after borrowed work across both lanes (HELPER-4, PROBE-3, PRICE-7)', () => {
  let c: LendingCluster;

  const worker = async (path: string, owner: string, id: string, body: Record<string, unknown>) => {
    const res = await fetch(`${c.urls.helper}/router/v1/node/worker/v1/${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${CLUSTER_TOKEN}`,
        'content-type': 'application/json',
        'x-routerdesk-borrowed-from': owner,
        'x-routerdesk-request-id': id,
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  /** A borrowed chat request for the helper's text model `model` from `owner` ('node/localId'). */
  const borrowedChat = (
    model: string,
    owner: string,
    id: string,
    o: { maxTokens?: number; extra?: Record<string, unknown> } = {},
  ) =>
    worker('chat/completions', owner, id, {
      model,
      messages: [{ role: 'user', content: 'hello there' }],
      max_tokens: o.maxTokens ?? 4,
      stream: false,
      ...o.extra,
    });
  /** A borrowed image request for p from owner/ai (steps × 25 ms). */
  const borrowedImage = (id: string, steps: number) =>
    worker('images/generations', 'owner/ai', id, { model: 'p', prompt: 'a lighthouse', size: '64x64', steps, n: 1 });
  const ownImage = async (model: string) => {
    const res = await fetch(`${c.urls.helper}/v1/images/generations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, prompt: 'x', size: '64x64', steps: 2, n: 1 }),
    });
    await res.arrayBuffer();
    return res.status;
  };
  const lanes = async () =>
    (
      (await (
        await fetch(`${c.urls.helper}/router/v1/console/lanes`, {
          headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
        })
      ).json()) as { lanes: LaneView[] }
    ).lanes;
  const lane = async (name: 'text' | 'image') => (await lanes()).find((l) => l.lane === name)!;
  const ready = async (name: 'text' | 'image', model: string) => {
    const l = await lane(name);
    return l.loaded === model && l.state === 'ready' && l.inflight === 0 && l.queued === 0;
  };
  /** Successful engine loads of a helper model so far (routerdesk_engine_loads_total). */
  const loads = async (publicId: string) => {
    const text = await (await fetch(`${c.urls.helper}/metrics`)).text();
    const line = text
      .split('\n')
      .find(
        (l) =>
          l.startsWith('routerdesk_engine_loads_total{') &&
          l.includes(`model="${publicId}"`) &&
          l.includes('success="true"'),
      );
    return line ? Number(line.split(' ').pop()) : 0;
  };
  const modelState = async (localId: string) =>
    (
      await c.slaves.helper.console<{ models: { localId: string; state: string }[] }>('/router/v1/console/models')
    ).models.find((m) => m.localId === localId)!.state;
  const lendingState = () =>
    c.node<{ ownIdleMs: number; sinceOwnRequestMs: number | null }>(c.urls.helper, '/router/v1/node/offload/state');
  /** Samples the helper's lanes every 20 ms until stopped. */
  const sampleLanes = (onView: (v: LaneView[]) => void) => {
    let on = true;
    const loop = (async () => {
      while (on) {
        try {
          onView(await lanes());
        } catch {
          /* the cluster stopping after a failed test */
        }
        await sleep(20);
      }
    })();
    return async () => {
      on = false;
      await loop;
    };
  };
  /** Waits until each lane holds its model, idle; on a timeout says what the lanes hold and what the helper warned. */
  const restored = (want: Partial<Record<'text' | 'image', string>>) =>
    eventually(
      async () => {
        for (const [name, model] of Object.entries(want))
          if (!(await ready(name as 'text' | 'image', model))) return false;
        return true;
      },
      { what: `restored ${JSON.stringify(want)}`, timeoutMs: 15_000 },
    ).catch(async (err: Error) => {
      const warned = c.slaves.helper
        .output()
        .split('\n')
        .filter((l) => /restor|fail|error/i.test(l))
        .slice(-8)
        .join('\n');
      throw new Error(`${err.message}\nlanes: ${JSON.stringify(await lanes())}\nhelper log:\n${warned}`);
    });
  /** Puts x on the text lane (its own request, only if it does not hold it already) and waits until that lane is idle. */
  const holdX = async () => {
    if (!(await ready('text', 'x'))) expect((await c.chat('helper', 'model-x')).status).toBe(200);
    await eventually(() => ready('text', 'x'), { what: 'x held on the text lane' });
  };
  const pairRows = async (since: number) =>
    ((await c.decisions({ kind: 'plan' })) as PlanRowView[]).filter(
      (r) => r.ownerModel === 'a' && r.helperModel === 'b' && r.at >= since && (r.held ?? 0) > 0,
    );

  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: {
        owner: { a: simText('model-a', '60ms'), d: simText('model-d', '60ms'), ai: simImage('paint-a', '20ms') },
        helper: {
          x: simText('model-x', '10ms', { load_time: '800ms' }),
          b: simText('model-b', '10ms'),
          c: simText('model-c', '10ms'),
          y: simText('model-y', '10ms'),
          p: simImage('paint-p', '25ms'),
          q: simImage('paint-q', '10ms'),
        },
      },
      cluster: { offload_restore_delay: `${RESTORE_DELAY_MS}ms` },
    });
    // Fits and load costs (before any link, so nothing is lent meanwhile): a on the owner, b on the helper.
    for (let i = 0; i < 3; i++) {
      expect((await c.chat('owner', 'model-a')).status).toBe(200);
      expect((await c.chat('helper', 'model-b')).status).toBe(200);
    }
    expect((await c.chat('helper', 'model-x')).status).toBe(200);
    expect(await ownImage('paint-q')).toBe(200);
    const flags = { load_if_unloaded: true, restore_after_borrow: true };
    await c.link('text', ['owner', 'a'], ['helper', 'b'], flags);
    await c.link('text', ['owner', 'd'], ['helper', 'c'], flags);
    await c.link('image', ['owner', 'ai'], ['helper', 'p'], flags);
  });
  afterAll(() => c?.stop());

  it('HELPER-4: borrowed work continuing on the image lane keeps the text lane on b; x and q come back only once both lanes are quiet', async () => {
    await holdX();
    await eventually(() => ready('image', 'q'), { what: 'q held on the image lane' });
    // Two image loops keep borrowed image work in flight without a gap (one at the engine, one behind it) until
    // well past the restore delay after the text job ended.
    let textDoneAt = 0;
    let n = 0;
    const keepGoing = () => textDoneAt === 0 || Date.now() - textDoneAt < 4 * RESTORE_DELAY_MS;
    const loop = async (k: number) => {
      const statuses: number[] = [];
      while (keepGoing()) statuses.push((await borrowedImage(`ra-img-${k}-${n++}`, 16)).status);
      return statuses;
    };
    const first = loop(0);
    await eventually(async () => (await lane('image')).loaded === 'p' && (await lane('image')).inflight > 0, {
      what: 'borrowed image work running on p',
    });
    const second = loop(1);
    const text = await borrowedChat('b', 'owner/a', 'ra-text');
    expect(text.status).toBe(200);
    textDoneAt = Date.now();
    const textSeen: string[] = [];
    const imageSeen: string[] = [];
    const stop = sampleLanes((v) => {
      const t = v.find((l) => l.lane === 'text')!;
      const i = v.find((l) => l.lane === 'image')!;
      textSeen.push(`${t.loaded}:${t.state}`);
      imageSeen.push(`${i.loaded}:${i.state}`);
    });
    let statuses: number[];
    try {
      statuses = [...(await first), ...(await second)];
    } finally {
      await stop();
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(textSeen.length).toBeGreaterThan(10);
    // The text lane stayed on b the whole time borrowed image work kept coming (no restore of x in between).
    expect(new Set(textSeen)).toEqual(new Set(['b:ready']));
    expect(new Set(imageSeen)).toEqual(new Set(['p:ready']));
    // Then both lanes are quiet: each reloads what it held before its borrowed run.
    await restored({ text: 'x', image: 'q' });
  });

  it('HELPER-4: its own request for another model arriving before the delay cancels the pending restore: the lane ends on y, x is not reloaded', async () => {
    await holdX();
    const xLoads = await loads('model-x');
    expect((await borrowedChat('b', 'owner/a', 'rb-text')).status).toBe(200);
    expect((await lane('text')).loaded).toBe('b'); // x displaced: a restore of x is pending now
    expect((await c.chat('helper', 'model-y')).status).toBe(200); // sent at once, well inside the delay
    const after = await lane('text');
    expect(after.loaded).toBe('y');
    // Several delays of quiet: a restore that was still pending would have reloaded x by now (a wait for
    // something that must not happen).
    await sleep(4 * RESTORE_DELAY_MS);
    const later = await lane('text');
    expect(later).toMatchObject({ loaded: 'y', state: 'ready', pid: after.pid });
    expect(await loads('model-x')).toBe(xLoads);
  });

  it('HELPER-4: a run of borrowed requests from two owners (x held, then b from owner/a, then c from owner/d) restores x, not the intermediate b', async () => {
    await holdX();
    const before = { b: await loads('model-b'), c: await loads('model-c'), x: await loads('model-x') };
    const seen: string[] = [];
    const stop = sampleLanes((v) => {
      const t = v.find((l) => l.lane === 'text')!;
      if (t.loaded && t.loaded !== seen[seen.length - 1]) seen.push(t.loaded);
    });
    try {
      const first = borrowedChat('b', 'owner/a', 'rc-b', { maxTokens: 8, extra: { sim_token_time: 100 } });
      await eventually(async () => (await lane('text')).loaded === 'b' && (await lane('text')).inflight === 1, {
        what: 'rc-b running on b',
      });
      // c's request arrives while b still runs: it waits for the lane, then displaces b; the run goes on.
      const second = borrowedChat('c', 'owner/d', 'rc-c');
      await eventually(async () => (await lane('text')).queued === 1, { what: 'rc-c waiting for the lane' });
      expect((await first).status).toBe(200);
      expect((await second).status).toBe(200);
      await restored({ text: 'x' });
    } finally {
      await stop();
    }
    const last = (await lane('text')).loaded!;
    if (last !== seen[seen.length - 1]) seen.push(last); // the sampler may have stopped just before x was ready
    expect(seen).toEqual(['x', 'b', 'c', 'x']);
    expect({ b: await loads('model-b'), c: await loads('model-c'), x: await loads('model-x') }).toEqual({
      b: before.b + 1,
      c: before.c + 1,
      x: before.x + 1,
    });
  });

  it('PROBE-3 / PRICE-7: a restore is busy time for idleness but not its own request: plan rows after it do not say helper_recently_busy', async () => {
    await holdX();
    // Control: right after its own request ends, the pair a → b (b must be switched in) is helper_recently_busy.
    const ctlSince = Date.now();
    expect((await c.chat('helper', 'model-x')).status).toBe(200);
    const ctlAnswers = Promise.all(Array.from({ length: 3 }, () => c.chat('owner', 'model-a')));
    const ctlRows = await eventually(
      async () => {
        const rows = (await pairRows(ctlSince)).filter((r) => r.reason === 'helper_recently_busy');
        return rows.length ? rows : undefined;
      },
      { what: 'a helper_recently_busy plan row after its own request' },
    );
    expect((await ctlAnswers).map((a) => a.status)).toEqual([200, 200, 200]);
    const window = Math.max(...ctlRows.map((r) => (r.helperSwitchMs ?? 0) + Number(r.details?.helperRestoreMs ?? 0)));
    expect(window).toBeGreaterThan(0);
    await holdX();
    // Its last own request is now older than switch + way back: only a restore counted as a request could make
    // the pair "recently busy" again.
    await eventually(async () => ((await lendingState()).sinceOwnRequestMs ?? 0) > window, {
      what: 'own request outside the PRICE-7 window',
      timeoutMs: 15_000,
    });

    expect((await borrowedChat('b', 'owner/a', 'rd-text')).status).toBe(200);
    // During the restore of x: busy for idleness (PROBE-3), yet no own request runs (PRICE-7).
    const during = await eventually(
      async () => {
        const [state, s] = [await modelState('x'), await lendingState()];
        return state === 'starting' && s.ownIdleMs === 0 && (s.sinceOwnRequestMs ?? 0) > window ? s : undefined;
      },
      {
        what: 'x being restored while the helper counts as busy but not serving its own request',
        everyMs: 20,
        timeoutMs: 15_000,
      },
    );
    expect(during.ownIdleMs).toBe(0);
    await restored({ text: 'x' });

    // The owner's backlog right after the restore: the pair must switch (x holds the lane) and is priced, not
    // skipped as recently busy.
    const since = Date.now();
    const answers = Promise.all(Array.from({ length: 3 }, () => c.chat('owner', 'model-a')));
    const rows: PlanRowView[] = await eventually(
      async () => {
        const r = await pairRows(since);
        return r.some((x) => (x.helperSwitchMs ?? 0) > 0) ? r : undefined;
      },
      { what: 'plan rows for a → b after the restore' },
    );
    expect((await answers).map((a) => a.status)).toEqual([200, 200, 200]);
    const all = await pairRows(since);
    expect(all.filter((r) => r.reason === 'helper_recently_busy')).toEqual([]);
    const switching = rows.filter((r) => (r.helperSwitchMs ?? 0) > 0);
    expect(switching.every((r) => r.outcome === 'granted' || r.reason === 'cost_rejected')).toBe(true);
  });
});

import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DecisionRowView,
  type HeldItemView,
  type HeldView,
  type LendingCluster,
  simText,
  startLendingCluster,
  watchHeld,
} from '../support/lending-cluster';
import { eventually } from '../support/node-harness';

// Per-request gates on real nodes: which queued requests an owner may lend while a lease is live.
// - LLM-4: a stream is queued but never lent.
// - LLM-2: a request too large for the helper's window is never lent (smaller ones are).
// - LLM-1 / GUARD-2: a request with image input to a text-only owner never reaches a queue, a helper or an engine.
// - PROBE-2/3 cold start: from fresh nodes, probes come first and a priced lease follows within 2 × min_samples
//   jobs of the owner's own.
// Requests are told apart by the owner's held view (ids, stream flags, states) and by a max_tokens no other request
// uses (its analytics row, on the node whose engine answered it, records the tokens generated).

interface AnalyticsRow {
  id: number;
  node_id: string;
  local_id: string;
  model: string;
  streamed: number;
  prompt_bytes: number | null;
  tokens_generated: number | null;
  service_source: string | null;
  finished_at: number;
  duration_ms: number;
  queue_wait_ms: number;
  outcome: string;
  status: number | null;
}

function rowsOf(c: LendingCluster, nodeId: string, where = '1 = 1', ...args: unknown[]): AnalyticsRow[] {
  const db = new Database(join(c.slaves[nodeId].dir, 'store', 'router.db'), { readonly: true });
  try {
    return db.prepare(`SELECT * FROM request_analytics WHERE ${where} ORDER BY id`).all(...args) as AnalyticsRow[];
  } finally {
    db.close();
  }
}

/** A node's rows once there are at least `n` (analytics rows are written in batches, off the request path). */
const rowsOnce = (c: LendingCluster, nodeId: string, n: number, where = '1 = 1', ...args: unknown[]) =>
  eventually(
    () => {
      const rows = rowsOf(c, nodeId, where, ...args);
      return rows.length >= n ? rows : undefined;
    },
    { what: `${n} analytics rows on ${nodeId}` },
  );

/**
 * Waits until the helper has written a row for every request it served: its own (`own`) and each the owner records
 * as served by the helper. Only then does the absence of a row on the helper mean it never ran the request.
 */
async function helperSettled(c: LendingCluster, own: number) {
  const lentAnswered = rowsOf(c, 'owner', "node_id = 'helper'").length;
  await rowsOnce(c, 'helper', own + lentAnswered, "outcome = 'ok'");
}

/** Every item the owner's held view ever showed for one model: its stream flag and every state it was seen in. */
function trackItems(c: LendingCluster, nodeId: string, model: string) {
  const items = new Map<string, { stream: boolean; states: Set<string>; firstArrival: number }>();
  const views: { at: number; active: HeldItemView[]; held: HeldItemView[] }[] = [];
  const w = watchHeld(c, nodeId, (v: HeldView, at) => {
    const m = v.models.find((x) => x.model === model);
    if (!m) return;
    views.push({ at, active: m.active, held: m.held });
    for (const [list, i] of [
      ...m.active.map((i) => ['active', i] as const),
      ...m.held.map((i) => ['held', i] as const),
    ]) {
      const seen = items.get(i.id) ?? {
        stream: i.stream,
        states: new Set<string>(),
        firstArrival: Date.parse(i.firstArrival),
      };
      seen.states.add(list === 'active' ? 'active' : i.state);
      items.set(i.id, seen);
    }
  });
  return { items, views, stop: () => w.stop() };
}

const lentSince = async (c: LendingCluster, since: number) =>
  (await c.decisions({ event: 'lent' })).filter((r) => r.nodeId === 'owner' && r.at >= since);

/** The owner's lent rows since `since`, once every request the held view showed lent has its row (rows are written in batches). */
async function lentRows(
  c: LendingCluster,
  since: number,
  t: ReturnType<typeof trackItems>,
): Promise<DecisionRowView[]> {
  const seen = [...t.items].filter(([, i]) => i.states.has('lent')).map(([id]) => id);
  return eventually(
    async () => {
      const rows = await lentSince(c, since);
      const ids = new Set(rows.map((r) => r.requestId));
      return seen.every((id) => ids.has(id)) ? rows : undefined;
    },
    { what: `lent rows for the ${seen.length} requests seen lent` },
  );
}

/**
 * SSE text that ends properly: `count` content chunks, a finish reason, `[DONE]` last, no in-band error. Comment
 * lines (`: queued, position 2` while a stream waits in the router queue) are what every SSE client skips.
 */
function expectCompleteSse(raw: string, count: number) {
  const events = raw
    .split('\n\n')
    .map((e) =>
      e
        .split('\n')
        .filter((l) => !l.startsWith(':'))
        .join('\n')
        .trim(),
    )
    .filter(Boolean)
    .map((e) => e.replace(/^data: /, ''));
  expect(events.at(-1)).toBe('[DONE]');
  const chunks = events.slice(0, -1).map(
    (e) =>
      JSON.parse(e) as {
        error?: unknown;
        choices?: { delta?: { content?: string }; finish_reason?: string | null }[];
      },
  );
  expect(chunks.some((e) => e.error)).toBe(false);
  expect(chunks.filter((e) => e.choices?.[0]?.delta?.content).length).toBe(count);
  expect(chunks.some((e) => e.choices?.[0]?.finish_reason === 'length')).toBe(true);
}

// A 1×1 PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('per-request gates under a live lease: owner/a (slow) → helper/b (fast, 1024-token window)', () => {
  let c: LendingCluster;

  /** Fills the owner's engine with two long jobs, then sends `special` alone: returns its id once queued, and the answers. */
  async function behindTwoLongJobs(special: () => ReturnType<LendingCluster['chat']>) {
    const t = trackItems(c, 'owner', 'a');
    const fillers = [c.chat('owner', 'model-a', { maxTokens: 24 }), c.chat('owner', 'model-a', { maxTokens: 24 })];
    const fillerIds = await eventually(
      () => (t.views.at(-1)?.active.length === 2 ? t.views.at(-1)!.active.map((i) => i.id) : undefined),
      { what: 'two fillers at the owner engine' },
    );
    const answer = special();
    const id = await eventually(
      () => {
        const v = t.views.at(-1);
        return [...(v?.held ?? []), ...(v?.active ?? [])].find((i) => !fillerIds.includes(i.id))?.id;
      },
      { what: 'the special request queued on the owner' },
    );
    return { t, id, fillers, answer };
  }

  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: {
        owner: { a: { ...simText('model-a', '40ms'), contextsize: 8192 } },
        helper: { b: { ...simText('model-b', '10ms'), contextsize: 1024 } },
      },
    });
    // Own fits and token profiles first (PRICE-2, LLM-3: min_samples 3), sizes varied so the fits scale with the work.
    for (const maxTokens of [4, 8, 12]) {
      expect((await c.chat('owner', 'model-a', { maxTokens })).status).toBe(200);
      expect((await c.chat('helper', 'model-b', { maxTokens })).status).toBe(200);
    }
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  });
  afterAll(() => c?.stop());

  it('LLM-4: streams are queued but never lent, and the owner answers every one with a complete stream', async () => {
    const since = Date.now();
    const t = trackItems(c, 'owner', 'a');
    const streams = Array.from({ length: 6 }, () => c.chat('owner', 'model-a', { stream: true }));
    const plain = Array.from({ length: 6 }, () => c.chat('owner', 'model-a'));
    const [s, p] = await Promise.all([Promise.all(streams), Promise.all(plain)]);
    await t.stop();
    expect(s.map((a) => a.status)).toEqual(Array(6).fill(200));
    for (const a of s) expectCompleteSse((a.body as { raw: string }).raw, 8);
    expect(p.map((a) => a.status)).toEqual(Array(6).fill(200));
    expect(p.every((a) => a.body.model === 'model-a' && Array.isArray(a.body.choices))).toBe(true);

    // The helper was leasing: non-streams went to it.
    const lent = await lentRows(c, since, t);
    expect(lent.length).toBeGreaterThan(0);
    expect((await c.decisions({ kind: 'plan' })).some((r) => r.at >= since && r.outcome === 'granted')).toBe(true);
    // Every lent request is one of the non-streams the owner queued.
    for (const r of lent) expect(t.items.get(r.requestId!), `lent ${r.requestId}`).toMatchObject({ stream: false });
    const streamItems = [...t.items.values()].filter((i) => i.stream);
    expect(streamItems).toHaveLength(6);
    // Streams waited in the router queue while others were lent (queued, LLM-4), never lent nor held for the helper.
    expect(streamItems.some((i) => i.states.has('queued'))).toBe(true);
    expect(streamItems.every((i) => !i.states.has('lent') && !i.states.has('held'))).toBe(true);
    // Served where they were queued: the owner's engine answered all six streams; the helper's never saw one.
    await rowsOnce(c, 'owner', 12, 'finished_at >= ?', since);
    await helperSettled(c, 3);
    const ownerStreams = rowsOf(c, 'owner', 'streamed = 1 AND finished_at >= ?', since);
    expect(ownerStreams).toHaveLength(6);
    expect(
      ownerStreams.every(
        (r) =>
          r.node_id === 'owner' &&
          r.local_id === 'a' &&
          r.outcome === 'ok' &&
          r.service_source === 'engine' &&
          r.tokens_generated === 8,
      ),
    ).toBe(true);
    expect(rowsOf(c, 'helper', 'streamed = 1')).toEqual([]);
  });

  it('LLM-2: a request too large for the helper window is never lent while smaller ones behind it are', async () => {
    // ~24 KB of text: about 6000 tokens, more than the helper's 1024 by the safe bound (bytes + max_tokens) and by
    // the owner's measured bytes-per-token alike (its short chats measure ~20 bytes a token: 1200 tokens); the
    // owner's window (8192) holds it. max_tokens 7 marks it in the analytics.
    const since = Date.now();
    const big = 'lorem ipsum dolor sit amet '.repeat(900);
    const { t, id, fillers, answer } = await behindTwoLongJobs(() =>
      c.chat('owner', 'model-a', { maxTokens: 7, extra: { messages: [{ role: 'user', content: big }] } }),
    );
    const small = Array.from({ length: 6 }, () => c.chat('owner', 'model-a'));
    const answers = await Promise.all([answer, ...fillers, ...small]);
    await t.stop();
    expect(answers.map((a) => a.status)).toEqual(Array(9).fill(200));

    const lent = await lentRows(c, since, t);
    expect(lent.length).toBeGreaterThan(0);
    expect(lent.map((r) => r.requestId)).not.toContain(id);
    // The lease was live and smaller requests, queued behind the big one, were lent past it (from the log, not from
    // a sample that has to catch both at one instant).
    expect(lent.some((r) => (t.items.get(r.requestId!)?.firstArrival ?? 0) >= t.items.get(id)!.firstArrival)).toBe(
      true,
    );
    expect([...t.items.get(id)!.states]).not.toContain('lent');
    expect([...t.items.get(id)!.states]).not.toContain('held');
    // The owner's engine answered it; the helper's never got it.
    await rowsOnce(c, 'owner', 9, 'finished_at >= ?', since);
    await helperSettled(c, 3);
    const ownerBig = rowsOf(c, 'owner', 'tokens_generated = 7 AND finished_at >= ?', since);
    expect(ownerBig).toHaveLength(1);
    expect(ownerBig[0]).toMatchObject({ node_id: 'owner', local_id: 'a', outcome: 'ok' });
    expect(ownerBig[0].prompt_bytes).toBeGreaterThan(big.length);
    expect(rowsOf(c, 'helper', 'tokens_generated = 7 OR prompt_bytes > 10000')).toEqual([]);
  });

  it('LLM-1 / GUARD-2: an image request to the text-only owner is neither queued nor lent: with no guardian it is a 400 at once', async () => {
    const since = Date.now();
    const t = trackItems(c, 'owner', 'a');
    const fillers = [c.chat('owner', 'model-a', { maxTokens: 24 }), c.chat('owner', 'model-a', { maxTokens: 24 })];
    await eventually(() => t.views.at(-1)?.active.length === 2, { what: 'two fillers at the owner engine' });
    const messages = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is in this picture?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        ],
      },
    ];
    const image = await c.chat('owner', 'model-a', { maxTokens: 6, extra: { messages } });
    const small = Array.from({ length: 6 }, () => c.chat('owner', 'model-a'));
    const answers = await Promise.all([...fillers, ...small]);
    await t.stop();
    expect(image.status).toBe(400);
    expect(image.body.error).toMatchObject({
      code: 'guardian_required',
      message: expect.stringMatching(/'model-a' on node 'owner' is text-only/),
    });
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    // No router queue ever held it, and no engine saw it: only the fillers and the small requests were recorded.
    expect(t.views.every((v) => [...v.held, ...v.active].length <= 8)).toBe(true);
    await rowsOnce(c, 'owner', 8, 'finished_at >= ?', since);
    await helperSettled(c, 3);
    expect(rowsOf(c, 'owner', "outcome = 'error' AND finished_at >= ?", since)).toEqual([]);
    expect(rowsOf(c, 'helper', "outcome = 'error'")).toEqual([]);
  });
});

describe('LLM-2 before any token profile: the safe bound (body bytes + max_tokens) keeps a ~3 KB request off a 1024-token helper', () => {
  let c: LendingCluster;

  beforeAll(async () => {
    // min_samples out of reach: no fit, no token profile, ever; the helper is leased only by probes (PROBE-2).
    c = await startLendingCluster({
      slaves: {
        owner: { a: { ...simText('model-a', '40ms'), contextsize: 8192 } },
        helper: { b: { ...simText('model-b', '10ms'), contextsize: 1024 } },
      },
      cluster: { scheduling_min_samples: 1000 },
    });
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
    await c.node(c.urls.helper, '/router/v1/node/load', { method: 'POST', body: JSON.stringify({ localId: 'b' }) });
  });
  afterAll(() => c?.stop());

  it('probes lend the small requests past it; the owner serves it', async () => {
    const since = Date.now();
    const t = trackItems(c, 'owner', 'a');
    const fillers = [c.chat('owner', 'model-a', { maxTokens: 24 }), c.chat('owner', 'model-a', { maxTokens: 24 })];
    const fillerIds = await eventually(
      () => (t.views.at(-1)?.active.length === 2 ? t.views.at(-1)!.active.map((i) => i.id) : undefined),
      { what: 'two fillers at the owner engine' },
    );
    // ~3000 bytes: bound ≈ 3100 tokens > 1024 (the true prompt is ~750 tokens, but there is no profile to say so).
    const big = c.chat('owner', 'model-a', {
      maxTokens: 7,
      extra: { messages: [{ role: 'user', content: 'x'.repeat(3000) }] },
    });
    const id = await eventually(
      () => {
        const v = t.views.at(-1);
        return [...(v?.held ?? []), ...(v?.active ?? [])].find((i) => !fillerIds.includes(i.id))?.id;
      },
      { what: 'the big request queued' },
    );
    // Enough of them that the queue's mean size (the plan's gate) stays within the window while the big one waits.
    const small = Array.from({ length: 8 }, () => c.chat('owner', 'model-a'));
    const answers = await Promise.all([big, ...fillers, ...small]);
    await t.stop();
    expect(answers.map((a) => a.status)).toEqual(Array(11).fill(200));

    const lent = await lentRows(c, since, t);
    expect(lent.length).toBeGreaterThan(0);
    expect(lent.map((r) => r.requestId)).not.toContain(id);
    expect(
      t.views.some(
        (v) => v.held.some((i) => i.id === id && i.state === 'queued') && v.held.some((i) => i.state === 'lent'),
      ),
    ).toBe(true);
    expect([...t.items.get(id)!.states]).not.toContain('lent');
    const plans = (await c.decisions({ kind: 'plan' })).filter((r) => r.at >= since);
    expect(plans.some((r) => r.outcome === 'probe')).toBe(true);
    expect(plans.some((r) => r.outcome === 'granted')).toBe(false);
    await rowsOnce(c, 'owner', 11);
    await helperSettled(c, 0);
    expect(rowsOf(c, 'owner', 'tokens_generated = 7')).toMatchObject([
      { node_id: 'owner', local_id: 'a', outcome: 'ok' },
    ]);
    expect(rowsOf(c, 'helper', 'tokens_generated = 7 OR prompt_bytes > 2500')).toEqual([]);
  });
});

describe('cold start (PROBE-2/3, PRICE-2/3): fresh nodes, min_samples 3', () => {
  const MIN_SAMPLES = 3;
  let c: LendingCluster;

  beforeAll(async () => {
    c = await startLendingCluster({
      slaves: { owner: { a: simText('model-a', '40ms') }, helper: { b: simText('model-b', '40ms') } },
      cluster: { scheduling_min_samples: MIN_SAMPLES },
    });
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
    // The helper's model is loaded (a load is load-cost data, PRICE-4), nothing has been measured: no fit, no token
    // profile on either side. Without the load the first probe would wait 12 × the idle time (PROBE-1).
    await c.node(c.urls.helper, '/router/v1/node/load', { method: 'POST', body: JSON.stringify({ localId: 'b' }) });
    await eventually(
      async () =>
        (await c.node<{ ownIdleMs: number }>(c.urls.helper, '/router/v1/node/offload/state')).ownIdleMs >= 400,
      { what: 'helper idle (PROBE-3)' },
    );
  });
  afterAll(() => c?.stop());

  it(`probes first, then a priced lease within 2 × min_samples jobs served by the owner`, async () => {
    const since = Date.now();
    const t = trackItems(c, 'owner', 'a');
    const queued = () => t.views.at(-1)?.held.filter((i) => i.state === 'queued').length ?? 0;
    const planRows = async () =>
      (await c.decisions({ kind: 'plan' })).filter((r) => r.ownerModel === 'a' && r.at >= since);
    const granted = async () => (await planRows()).some((r) => r.outcome === 'granted');
    const answers: Promise<{ status: number }>[] = [];
    // Bursts of four, each next one once the owner has at most one request left waiting, until a lease is granted:
    // the owner keeps held work while its fit forms, however slow the machine (a fixed number of bursts could run dry
    // just as the third job finished). The bound on owner jobs below is what the test asserts; the burst cap is a
    // backstop that stays well beyond it.
    for (let b = 0; b < 6; b++) {
      if (b > 0) {
        const next = await eventually(
          async () => ((await granted()) ? 'granted' : t.views.length > 0 && queued() <= 1 ? 'burst' : undefined),
          { what: 'owner backlog down to one, or a granted lease', timeoutMs: 20_000 },
        );
        if (next === 'granted') break;
      }
      for (let i = 0; i < 4; i++) answers.push(c.chat('owner', 'model-a'));
      await eventually(() => t.views.at(-1) && [...t.items.values()].length >= 4 * (b + 1), {
        what: `burst ${b + 1} queued`,
      });
    }
    const results = await Promise.all(answers);
    await t.stop();
    expect(results.map((a) => a.status)).toEqual(Array(answers.length).fill(200));

    const plans = await eventually(
      async () => {
        const rows = await planRows();
        return rows.some((r) => r.outcome === 'granted') ? rows : undefined;
      },
      { what: 'a granted plan row' },
    );
    const firstGranted = plans.find((r) => r.outcome === 'granted')!;
    const before: DecisionRowView[] = plans.filter((r) => r.at <= firstGranted.at && r !== firstGranted);
    // Probes came first (PROBE-2: neither side priced yet; the size bound stands in for a token profile).
    expect(before.some((r) => r.outcome === 'probe' && r.reason === 'owner_unpriced')).toBe(true);
    // Jobs the owner's engine took before the first priced lease: its fit needs min_samples of them, and the lease
    // follows within twice that.
    await rowsOnce(c, 'owner', answers.length, 'finished_at >= ?', since);
    const own = rowsOf(c, 'owner', "node_id = 'owner' AND local_id = 'a' AND finished_at >= ?", since);
    const dispatchedBefore = own.filter(
      (r) => r.finished_at - r.duration_ms + r.queue_wait_ms <= firstGranted.at,
    ).length;
    expect(dispatchedBefore).toBeGreaterThanOrEqual(MIN_SAMPLES);
    expect(dispatchedBefore, `owner jobs before the first granted lease`).toBeLessThanOrEqual(2 * MIN_SAMPLES);
    // And the helper took work: probes then the lease.
    expect(rowsOf(c, 'owner', "node_id = 'helper'").length).toBeGreaterThan(0);
  });
});

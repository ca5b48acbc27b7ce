import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LENT_TO_HEADER } from '../../src-router/contract/answer-facts';
import { type CostFit, fitCost, predict } from '../../src-router/costs';
import { type LendingCluster, startLendingCluster } from '../support/lending-cluster';
import { eventually, tempDir } from '../support/node-harness';
import { REAL_ENGINES_TIMEOUT_MS } from '../support/real-engines';
import { llamaServerModel, tinyGguf } from '../support/real-llama';

// Lending between two nodes, each running the real llama-server: the owner a bigger (slower) random-weights model,
// the helper a smaller one, each with one slot and one thread. A burst at the owner is lent in part; every client gets exactly one answer; the owner's
// cost fit is made from the service times llama-server itself reports (`timings.prompt_ms + timings.predicted_ms`).
// `ignore_eos` makes every answer exactly max_tokens long whatever the random text is (no --jinja: see real-llama.ts).

const SIZES = [6, 10, 14, 18];
const BURST = [18, 6, 14, 10, 10, 18, 6, 14, 14, 10, 18, 6];

interface Timings {
  prompt_ms: number;
  predicted_ms: number;
  predicted_n: number;
}
interface Answer {
  status: number;
  lentTo: string | null;
  id: string;
  timings?: Timings;
  tokens: number;
}
interface Row {
  node_id: string;
  local_id: string;
  tokens_generated: number | null;
  service_ms: number | null;
  service_source: string | null;
  outcome: string;
}

describe('lending between two nodes on real llama-servers', () => {
  const dir = tempDir('routerdesk-real-lending-');
  let c: LendingCluster;

  const chat = async (nodeId: string, model: string, maxTokens: number): Promise<Answer> => {
    const res = await fetch(`${c.urlOf(nodeId)}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        messages: [{ role: 'user', content: 'tell me' }],
        max_tokens: maxTokens,
        ignore_eos: true,
      }),
    });
    const body = (await res.json()) as { id: string; timings?: Timings; usage?: { completion_tokens: number } };
    return {
      status: res.status,
      lentTo: res.headers.get(LENT_TO_HEADER),
      id: body.id,
      timings: body.timings,
      tokens: body.usage?.completion_tokens ?? -1,
    };
  };
  const rowsOf = (nodeId: string, publicId: string): Row[] => {
    const db = new Database(join(c.slaves[nodeId].dir, 'store', 'router.db'), { readonly: true });
    try {
      return db.prepare('SELECT * FROM request_analytics WHERE model = ? ORDER BY id').all(publicId) as Row[];
    } finally {
      db.close();
    }
  };
  const fitOf = async (nodeId: string, localId: string) =>
    (
      await c.node<{ models: { model: string; fit: CostFit | null }[] }>(
        c.urls[nodeId],
        '/router/v1/node/offload/state',
      )
    ).models.find((m) => m.model === localId)?.fit ?? null;

  beforeAll(async () => {
    const owner = await tinyGguf(dir, 'owner', { embd: 512, layers: 6, seed: 31 });
    const helper = await tinyGguf(dir, 'helper', { embd: 64, layers: 2, seed: 32 });
    c = await startLendingCluster({
      slaves: {
        owner: { a: await llamaServerModel('model-a', owner, {}) },
        helper: { b: await llamaServerModel('model-b', helper, {}) },
      },
    });
    await c.link('text', ['owner', 'a'], ['helper', 'b']);
  }, REAL_ENGINES_TIMEOUT_MS);
  afterAll(async () => {
    await c?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a burst is lent in part, every request answered exactly once, the fit made from llama-server’s timings', async () => {
    // Each side's own fit first (min samples 3), one request at a time: never held, never lent.
    for (const w of SIZES) {
      expect(await chat('owner', 'model-a', w)).toMatchObject({ status: 200, lentTo: null, tokens: w });
      expect(await chat('helper', 'model-b', w)).toMatchObject({ status: 200, lentTo: null, tokens: w });
    }
    await eventually(async () => (await fitOf('owner', 'a')) && (await fitOf('helper', 'b')), { what: 'both fits' });
    const answers = await Promise.all(BURST.map((w) => chat('owner', 'model-a', w)));
    expect(answers.map((a) => a.status)).toEqual(BURST.map(() => 200));
    expect(answers.map((a) => a.tokens)).toEqual(BURST);
    expect(new Set(answers.map((a) => a.id)).size).toBe(BURST.length);
    const lent = answers.filter((a) => a.lentTo !== null);
    // Nothing lent: the master's plan rows say why (they go into the failure message).
    const why = lent.length
      ? ''
      : JSON.stringify((await c.decisions({ kind: 'plan' })).map((r) => [r.outcome, r.reason, r.details]));
    expect(lent.length, why).toBeGreaterThan(0);
    expect(lent.every((a) => a.lentTo === 'helper/b')).toBe(true);
    // Every answer carries llama-server's own timings, the engine's count of the tokens it made.
    for (const a of answers) expect(a.timings?.predicted_n).toBe(a.tokens);

    // One analytics row per request at the owner (a lent one recorded as served by the helper), all ok.
    const total = SIZES.length + BURST.length;
    const rows = await eventually(
      () => {
        const r = rowsOf('owner', 'model-a');
        return r.length >= total ? r : undefined;
      },
      { what: `${total} rows at the owner` },
    );
    expect(rows).toHaveLength(total);
    expect(rows.every((r) => r.outcome === 'ok')).toBe(true);
    const own = rows.filter((r) => r.node_id === 'owner');
    expect(rows.filter((r) => r.node_id === 'helper')).toHaveLength(lent.length);
    // The owner's service times are llama-server's timings, answer by answer.
    expect(own.every((r) => r.service_source === 'engine')).toBe(true);
    const keptByOwner = answers.filter((a) => a.lentTo === null);
    expect(own).toHaveLength(SIZES.length + keptByOwner.length);
    const ownTimings = keptByOwner.map((a) => a.timings!.prompt_ms + a.timings!.predicted_ms);
    const burstRows = own
      .slice(SIZES.length)
      .map((r) => r.service_ms!)
      .sort((x, y) => x - y);
    ownTimings.sort((x, y) => x - y);
    burstRows.forEach((ms, i) =>
      expect(Math.abs(ms - ownTimings[i]), `${ms} vs ${ownTimings[i]}`).toBeLessThanOrEqual(1),
    );
    // And the fit is the least-squares fit of exactly those samples (PRICE-2).
    const expected = fitCost(
      own.map((r) => ({ work: r.tokens_generated!, durationMs: r.service_ms! })),
      3,
    )!;
    const fit = await eventually(
      async () => {
        const f = await fitOf('owner', 'a');
        return f && f.samples === own.length ? f : undefined;
      },
      { what: `the owner's fit over ${own.length} samples` },
    );
    for (const w of SIZES) expect(predict(fit, w)!).toBeCloseTo(predict(expected, w)!, 3);
  });
});

import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfigInput } from '../../src-router/config';
import { CLUSTER_TOKEN, type LendingCluster, simText, startLendingCluster } from '../support/lending-cluster';
import { eventually, TEST_CONSOLE_TOKEN } from '../support/node-harness';

// GUARD-2 / GUARD-3 on real nodes: an image request addressed to a text-only model is answered by its guardian
// (detected in the request, or after the model's engine refused it), keeps the model ID the client asked for, names
// the guardian in `x-routerdesk-served-by`, and is logged; a guardian on the same node shares its runtime (the
// text-only model is loaded back after the restore delay once quiet; a native request cancels that), a remote one
// answers through forwarding and its node loads nothing back; no guardian is a clear 400.
//
// owner node: t, t2 (text-only), v (multimodal), r (says multimodal, its engine refuses images) — one text lane.
// helper node: g (multimodal), q (text-only). A link t → q lends t's backlog to q.

const RESTORE_DELAY_MS = 1000;
const vision = (name: string, sim: Record<string, unknown> = {}): ModelConfigInput => ({
  ...simText(name, '5ms', sim),
  capabilities: ['text', 'multimodal'],
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PIXEL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

interface LaneView {
  lane: string;
  loaded: string | null;
  state: string;
  pid: number | null;
  port: number | null;
}

describe('guardian models on the request path (GUARD-2, GUARD-3)', () => {
  let c: LendingCluster;

  beforeAll(async () => {
    c = await startLendingCluster({
      cluster: { offload_restore_delay: `${RESTORE_DELAY_MS}ms` },
      slaves: {
        owner: {
          t: simText('model-t', '5ms'),
          t2: simText('model-t2', '5ms'),
          v: vision('model-v'),
          r: vision('model-r', { fail: 'image_not_supported' }),
        },
        helper: { g: vision('model-g'), q: simText('model-q', '5ms') },
      },
    });
  });
  afterAll(() => c?.stop());

  const site = async (method: 'PUT' | 'DELETE', body: unknown) => {
    const res = await fetch(`${c.master.url}/router/v1/site/guardians`, {
      method,
      headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${method} guardians: ${res.status} ${await res.text()}`);
  };
  /** Applied on every node (GUARD-1: desired → applied) before a test relies on it. */
  const settled = async () => {
    const { version } = await c.console<{ version: number }>('/router/v1/site/guardians');
    await eventually(
      async () => {
        const view = await c.console<{ nodes: { nodeId: string; guardiansVersion?: number }[] }>(
          '/router/v1/console/lending',
        );
        return ['master', 'owner', 'helper'].every(
          (n) => view.nodes.find((x) => x.nodeId === n)?.guardiansVersion === version,
        );
      },
      { what: `guardian settings v${version} applied everywhere` },
    );
  };
  const imageChat = (model: string, o: { text?: string; stream?: boolean; ollama?: boolean; at?: string } = {}) => {
    const text = o.text ?? 'what is in this picture?';
    const url = o.at ?? c.master.url;
    return o.ollama
      ? fetch(`${url}/api/chat`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            model,
            stream: false,
            messages: [{ role: 'user', content: text, images: [PIXEL.split(',')[1]] }],
          }),
        })
      : fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            model,
            max_tokens: 4,
            stream: o.stream ?? false,
            messages: [
              {
                role: 'user',
                content: [
                  { type: 'text', text },
                  { type: 'image_url', image_url: { url: PIXEL } },
                ],
              },
            ],
          }),
        });
  };
  const lane = async (node: 'owner' | 'helper') =>
    (
      await c.node<{ lanes: LaneView[] }>(c.urls[node], '/router/v1/console/lanes', {
        headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
      })
    ).lanes.find((l) => l.lane === 'text')!;
  const seenAt = async (node: 'owner' | 'helper') => {
    const l = await lane(node);
    if (!l.port) return [];
    return (
      (await (await fetch(`http://127.0.0.1:${l.port}/sim/seen`)).json()) as { entries: { head: string }[] }
    ).entries.map((s) => s.head);
  };
  /** Successful engine loads of a model on a node (monotonic: no race with the restore timer). */
  const loads = async (node: 'owner' | 'helper', publicId: string) => {
    const text = await (await fetch(`${c.urls[node]}/metrics`)).text();
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
  const analytics = (node: 'owner' | 'helper' | 'master') => {
    const dir = node === 'master' ? c.master.dir : c.slaves[node].dir;
    const db = new Database(join(dir, 'store', 'router.db'), { readonly: true, fileMustExist: true });
    try {
      return db
        .prepare(
          'SELECT node_id, model, local_id, guardian_for, guardian_reason, outcome FROM request_analytics WHERE guardian_for IS NOT NULL ORDER BY id',
        )
        .all() as {
        node_id: string;
        model: string;
        local_id: string;
        guardian_for: string;
        guardian_reason: string;
        outcome: string;
      }[];
    } finally {
      db.close();
    }
  };

  it('no guardian: a clear 400 naming the model and how to set one (OpenAI- and Ollama-shaped); no engine sees the image', async () => {
    const res = await imageChat('model-t');
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string; param: string } };
    expect(body.error.code).toBe('guardian_required');
    expect(body.error.message).toMatch(/'model-t' on node 'owner' is text-only.*guardian/);
    const ollama = await imageChat('model-t', { ollama: true, at: c.urls.owner });
    expect(ollama.status).toBe(400);
    expect(((await ollama.json()) as { error: string }).error).toMatch(/text-only.*guardian/);
    expect((await lane('owner')).loaded).toBeNull(); // nothing was started for it
  });

  it('the most specific setting wins: model, then node, then cluster; the answer keeps the model ID asked for', async () => {
    await site('PUT', { scope: 'cluster', guardian: { node_id: 'helper', model: 'g' } });
    await site('PUT', { scope: 'node', node_id: 'owner', guardian: { node_id: 'owner', model: 'v' } });
    await site('PUT', { scope: 'model', node_id: 'owner', model: 't2', guardian: { node_id: 'helper', model: 'g' } });
    await settled();
    for (const [model, servedBy] of [
      ['model-t', 'owner/v'],
      ['model-t2', 'helper/g'],
      ['model-q', 'helper/g'],
    ] as const) {
      const res = await imageChat(model);
      expect(res.status, model).toBe(200);
      expect(res.headers.get('x-routerdesk-served-by'), model).toBe(servedBy);
      expect(((await res.json()) as { model: string }).model).toBe(model);
    }
    // An Ollama `images` list is detected too; the answer is Ollama-shaped under the model asked for.
    const ollama = await imageChat('model-t', { ollama: true, at: c.urls.owner });
    expect(ollama.status).toBe(200);
    expect(ollama.headers.get('x-routerdesk-served-by')).toBe('owner/v');
    expect(await ollama.json()).toMatchObject({ model: 'model-t', done: true, message: { role: 'assistant' } });
    const rows = await c.decisions({ event: 'guardian_routed' });
    expect(rows.map((r) => [r.ownerModel, `${r.helperNode}/${r.helperModel}`, r.reason, r.details?.from])).toEqual([
      ['t', 'owner/v', 'detected', 'node'],
      ['t2', 'helper/g', 'detected', 'model'],
      ['q', 'helper/g', 'detected', 'cluster'],
      ['t', 'owner/v', 'detected', 'node'],
    ]);
  });

  it('a local guardian shares the runtime: the text-only model is loaded back after the restore delay once quiet (GUARD-3)', async () => {
    expect((await c.chat('owner', 'model-t')).status).toBe(200);
    expect((await lane('owner')).loaded).toBe('t');
    const [t0, v0] = [await loads('owner', 'model-t'), await loads('owner', 'model-v')];
    const res = await imageChat('model-t', { at: c.urls.owner, text: 'local guardian please' });
    expect(res.headers.get('x-routerdesk-served-by')).toBe('owner/v');
    expect(await loads('owner', 'model-v')).toBe(v0 + 1); // it waited for t's work, loaded and answered
    await eventually(
      async () =>
        (await loads('owner', 'model-t')) === t0 + 1 &&
        (await lane('owner')).loaded === 't' &&
        (await lane('owner')).state === 'ready',
      { timeoutMs: 15_000, what: 't loaded back after the guardian' },
    );
  });

  it('a native request before the delay cancels the pending restore: the lane stays on what it asked for', async () => {
    expect((await imageChat('model-t', { at: c.urls.owner })).headers.get('x-routerdesk-served-by')).toBe('owner/v');
    expect((await c.chat('owner', 'model-v')).status).toBe(200); // a native request for v, well inside the delay
    const after = await lane('owner');
    expect(after.loaded).toBe('v');
    // Several delays of quiet: a restore still pending would have reloaded t by now (a wait for what must not happen).
    await sleep(4 * RESTORE_DELAY_MS);
    expect(await lane('owner')).toMatchObject({ loaded: 'v', state: 'ready', pid: after.pid });
  });

  it('a remote guardian answers through forwarding; its node does not load its own model back afterwards', async () => {
    expect((await c.chat('helper', 'model-q')).status).toBe(200);
    expect((await lane('helper')).loaded).toBe('q');
    const owner = await lane('owner');
    const res = await imageChat('model-t2', { at: c.urls.owner, text: 'remote guardian please' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-routerdesk-served-by')).toBe('helper/g');
    expect(((await res.json()) as { model: string }).model).toBe('model-t2');
    const helper = await lane('helper');
    expect(helper.loaded).toBe('g');
    expect((await seenAt('helper')).some((h) => h.includes('remote guardian please'))).toBe(true);
    await sleep(4 * RESTORE_DELAY_MS);
    expect(await lane('helper')).toMatchObject({ loaded: 'g', pid: helper.pid });
    // The owner's lane never moved for it.
    expect((await lane('owner')).pid).toBe(owner.pid);
  });

  it('a streamed image request is answered by the guardian as a stream, every event under the model ID asked for', async () => {
    const res = await imageChat('model-t', { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(res.headers.get('x-routerdesk-served-by')).toBe('owner/v');
    const events = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
      .map((l) => JSON.parse(l.slice(6)) as { model: string });
    expect(events.length).toBeGreaterThan(1);
    expect(new Set(events.map((e) => e.model))).toEqual(new Set(['model-t']));
  });

  it('an engine that refuses an image sends the request to the guardian instead of a retry; without one, a 400 that says so', async () => {
    const res = await imageChat('model-r', { at: c.urls.owner });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-routerdesk-served-by')).toBe('owner/v');
    expect(((await res.json()) as { model: string }).model).toBe('model-r');
    const rows = await c.decisions({ event: 'guardian_routed' });
    expect(rows.filter((r) => r.ownerModel === 'r').map((r) => [r.reason, r.details?.engineStatus])).toEqual([
      ['engine_refused', 500],
    ]);
    await site('DELETE', { scope: 'node', node_id: 'owner' });
    await site('DELETE', { scope: 'cluster' });
    await settled();
    const refused = await imageChat('model-r', { at: c.urls.owner });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'guardian_required',
      message: expect.stringMatching(/could not read the image.*not supported/),
    });
  });

  it('request analytics record that a guardian answered and why, on the node that ran it', async () => {
    await eventually(() => analytics('owner').some((r) => r.guardian_reason === 'engine_refused'), {
      what: 'the refusal row',
    });
    const owner = analytics('owner');
    expect(owner.filter((r) => r.local_id === 'v' && r.outcome === 'ok').map((r) => r.guardian_for)).toEqual(
      expect.arrayContaining(['owner/t', 'owner/r']),
    );
    expect(owner.find((r) => r.guardian_for === 'owner/r')?.guardian_reason).toBe('engine_refused');
    await eventually(() => analytics('helper').some((r) => r.guardian_for === 'owner/t2'), {
      what: 'the remote guardian row on the helper',
    });
  });

  it('an image request on an owner with a non-vision helper stays on the owner: it goes to the guardian, never lent', async () => {
    await site('PUT', { scope: 'model', node_id: 'owner', model: 't', guardian: { node_id: 'owner', model: 'v' } });
    await settled();
    await c.link('text', ['owner', 't'], ['helper', 'q']);
    // A backlog on t that the planner lends to q, with image requests among it.
    const texts = Array.from({ length: 4 }, () =>
      c.chat('owner', 'model-t', { maxTokens: 40, extra: { sim_token_time: 25 } }),
    );
    const images = Array.from({ length: 2 }, (_, i) =>
      imageChat('model-t', { at: c.urls.owner, text: `image request ${i}` }),
    );
    const answers = await Promise.all(images);
    for (const a of answers) expect(a.headers.get('x-routerdesk-served-by')).toBe('owner/v');
    for (const t of await Promise.all(texts)) expect(t.status).toBe(200);
    const seen = await seenAt('helper');
    expect(seen.filter((h) => h.includes('image request'))).toEqual([]);
    expect(await c.decisions({ event: 'lent' }).then((rows) => rows.every((r) => r.ownerModel === 't'))).toBe(true);
  });

  it('a guardian-forwarded worker call is never routed to a guardian again (no loops), and only the cluster token makes one', async () => {
    const res = await fetch(`${c.urls.helper}/router/v1/node/worker/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${CLUSTER_TOKEN}`,
        'content-type': 'application/json',
        'x-routerdesk-guardian-for': 'detected owner/t',
      },
      body: JSON.stringify({
        model: 'g',
        max_tokens: 2,
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: PIXEL } }] }],
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-routerdesk-served-by')).toBeNull();
  });
});

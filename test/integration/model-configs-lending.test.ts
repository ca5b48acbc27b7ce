import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLUSTER_TOKEN,
  type HeldView,
  type LendingCluster,
  simText,
  startLendingCluster,
} from '../support/lending-cluster';
import { eventually, TEST_CONSOLE_TOKEN } from '../support/node-harness';

// A model removed through the console API while it is enrolled in a lending link and requests wait in its router
// queue (not only run at its engine), some perhaps lent to the helper: custody holds — every request gets exactly one
// answer (served, or refused with the usual unavailable answer), none is lost or left hanging, and the DELETE answers.

describe('issue #28: DELETE of an enrolled model with queued and lent requests', () => {
  let c: LendingCluster;
  const api = (url: string, path: string, method: string) =>
    fetch(`${url}/router/v1/console/model-configs${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
    });
  const held = (url: string) => c.node<HeldView>(url, '/router/v1/node/held');

  beforeAll(async () => {
    c = await startLendingCluster({
      masterModels: { home: simText('home-model', '2ms'), lender: simText('lender-model', '40ms') },
      slaves: { gpu: { victim: simText('victim-model', '40ms'), stay: simText('stay-model', '2ms') } },
    });
    await c.link('text', ['gpu', 'victim'], ['master', 'home']);
    await c.link('text', ['gpu', 'stay'], ['master', 'lender']);
  });
  afterAll(async () => {
    await c?.stop();
  });

  it('every queued, running or lent request gets exactly one answer, and the DELETE answers', async () => {
    const N = 6;
    const answers = Array.from({ length: N }, () => c.chat('gpu', 'victim-model', { maxTokens: 25 }));
    // Requests wait in the router queue behind the one at the engine.
    await eventually(
      async () => {
        const m = (await held(c.urls.gpu)).models.find((x) => x.model === 'victim');
        return m && m.held.length >= 2;
      },
      { what: 'requests waiting in the router queue', everyMs: 10 },
    );
    const del = await api(c.urls.gpu, '/victim', 'DELETE');
    expect(del.status, await del.clone().text()).toBe(200);
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error('a request never got its answer')), 60_000)),
    );
    const all = await Promise.race([Promise.all(answers), hung]).finally(() => clearTimeout(timer));
    for (const a of all) {
      if (a.status === 200) expect(a.body.choices).toHaveLength(1);
      else {
        expect([404, 503], JSON.stringify(a.body)).toContain(a.status);
        expect(a.body.error).toMatchObject({ code: expect.stringMatching(/^(model_unavailable|model_not_found)$/) });
      }
    }
    // The queue of the removed model is empty; the node serves its other model.
    await eventually(
      async () => {
        const m = (await held(c.urls.gpu)).models.find((x) => x.model === 'victim');
        return !m || (m.held.length === 0 && m.active.length === 0);
      },
      { what: "the removed model's queue empty" },
    );
    expect((await c.chat('gpu', 'stay-model')).status).toBe(200);
    expect((await c.chat('gpu', 'victim-model')).status).toBe(404);
  });

  it("the helper's model removed while it holds borrowed requests: each not started is handed back to its owner, none refused", async () => {
    // Borrowed requests as the master relays them to the helper (LEASE-5): the worker API, the owner named.
    const borrowed = (id: string) =>
      fetch(`${c.master.url}/router/v1/node/worker/v1/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${CLUSTER_TOKEN}`,
          'content-type': 'application/json',
          'x-routerdesk-borrowed-from': 'gpu/stay',
          'x-routerdesk-request-id': id,
        },
        body: JSON.stringify({
          model: 'lender',
          messages: [{ role: 'user', content: 'hello there' }],
          max_tokens: 25,
          stream: false,
        }),
      }).then(async (res) => ({
        status: res.status,
        body: (await res.json()) as { choices?: unknown[]; error?: { code?: string; reason?: string } },
      }));
    const answers = Array.from({ length: 5 }, (_, i) => borrowed(`borrowed-${i}-${Date.now()}`));
    await eventually(
      async () => {
        const m = (await held(c.master.url)).models.find((x) => x.model === 'lender');
        return m && m.held.length >= 2;
      },
      { what: 'borrowed requests waiting at the helper', everyMs: 10 },
    );
    const del = await api(c.master.url, '/lender', 'DELETE');
    expect(del.status, await del.clone().text()).toBe(200);
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error('a borrowed request never got its answer')), 60_000)),
    );
    const all = await Promise.race([Promise.all(answers), hung]).finally(() => clearTimeout(timer));
    for (const a of all) {
      if (a.status === 200) expect(a.body.choices).toHaveLength(1);
      else {
        // Not started here: handed back, so its owner runs it — never refused as unavailable for the owner's client.
        expect(a.status, JSON.stringify(a.body)).toBe(409);
        expect(a.body.error).toMatchObject({ code: 'offload_returned', reason: 'no_link' });
      }
    }
    expect((await c.chat('master', 'home-model')).status).toBe(200);
  });

  it('a model renamed through PUT keeps its link (the link names its file, the local ID): still enrolled, served under the new name', async () => {
    const res = await fetch(`${c.urls.gpu}/router/v1/console/model-configs/stay`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ config: simText('stay-renamed', '2ms') }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await held(c.urls.gpu)).models.map((m) => m.model)).toContain('stay');
    expect((await c.chat('gpu', 'stay-renamed')).status).toBe(200);
    expect((await c.chat('gpu', 'stay-model')).status).toBe(404);
    await eventually(
      async () =>
        (await c.console<{ models: { id: string }[] }>('/router/v1/console/cluster/models')).models.some(
          (m) => m.id === 'stay-renamed',
        ),
      { what: "the new name in the master's catalog" },
    );
    expect((await c.chat('master', 'stay-renamed')).status).toBe(200);
  });
});

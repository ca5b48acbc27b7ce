import { describe, expect, it } from 'vitest';
import { createConsoleClient, type FetchLike } from '../../src-renderer/src/api/console-client';
import { createAppStore } from '../../src-renderer/src/store/app-store';
import type { GuardianSetting, GuardiansView } from '../../src-router/contract';

// The `guardians` slice and the site API of guardian settings (UI-4, GUARD-1), over a scripted fetch.

const URL_ = 'http://127.0.0.1:8080';
const TOKEN = 'console-token-for-tests';
const PATH = '/router/v1/site/guardians';
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const VL = { node_id: 'master', model: 'vl' };
const setting: GuardianSetting = {
  scope: 'cluster',
  node_id: null,
  model: null,
  guardian: VL,
  updated_at: '2025-01-02T12:00:00.000Z',
};
const view = (settings: GuardianSetting[], version = settings.length): GuardiansView => ({
  version,
  settings,
  effective: [
    {
      node_id: 'master',
      model: 'a',
      public_id: 'model-a',
      guardian: settings[0]?.guardian ?? null,
      from: settings[0] ? 'cluster' : null,
      available: !!settings[0],
    },
  ],
  candidates: [{ ...VL, public_id: 'model-vl' }],
  nodes: ['master'],
});

function setup(answers: Record<string, Response[]>) {
  const calls: { method: string; path: string; body: unknown; contentType: string | null }[] = [];
  const fetch: FetchLike = async (url, init) => {
    const method = init?.method ?? 'GET';
    const path = new URL(url).pathname;
    calls.push({
      method,
      path,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
      contentType: new Headers(init?.headers).get('content-type'),
    });
    const next = answers[`${method} ${path}`]?.shift();
    if (!next) throw new Error(`no scripted answer left for ${method} ${path}`);
    return next;
  };
  return {
    store: createAppStore(URL_, { client: createConsoleClient({ url: URL_, token: TOKEN, fetch }), now: () => 7 }),
    calls,
  };
}

describe('guardians slice', () => {
  it('reads the settings view and mirrors it; a rejected token hides it, an outage keeps it', async () => {
    const { store } = setup({
      [`GET ${PATH}`]: [json(200, view([setting])), json(500, { error: { message: 'boom' } }), json(401, {})],
    });
    await store.getState().fetchGuardians();
    expect(store.getState().guardians).toMatchObject({
      view: view([setting]),
      failure: null,
      fetchedAt: 7,
      loading: false,
    });
    await store.getState().fetchGuardians();
    expect(store.getState().guardians).toMatchObject({ view: view([setting]), failure: { kind: 'http' } });
    await store.getState().fetchGuardians();
    expect(store.getState().guardians).toMatchObject({ view: null, failure: { kind: 'rejected' } });
  });

  it('a view that does not match the contract is a failure naming the field', async () => {
    const { store } = setup({ [`GET ${PATH}`]: [json(200, { ...view([]), version: 'x' })] });
    await store.getState().fetchGuardians();
    expect(store.getState().guardians.failure?.message).toMatch(/version/);
  });

  it('PUT sends the setting as JSON and reads the view again', async () => {
    const { store, calls } = setup({
      [`PUT ${PATH}`]: [json(200, setting)],
      [`GET ${PATH}`]: [json(200, view([setting]))],
    });
    const result = await store.getState().setGuardian({ scope: 'cluster', guardian: VL });
    expect(result).toEqual({ ok: true, value: setting });
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([`PUT ${PATH}`, `GET ${PATH}`]);
    expect(calls[0]).toMatchObject({ body: { scope: 'cluster', guardian: VL }, contentType: 'application/json' });
    expect(store.getState().guardians).toMatchObject({ view: view([setting]), writing: false });
  });

  it("a refused PUT returns the node's message and the field it named", async () => {
    const refusal = {
      error: {
        message: 'a on master cannot read images (capabilities: text): a guardian must be a multimodal text model',
        type: 'invalid_request_error',
        param: 'guardian',
        code: 'guardian_not_multimodal',
      },
    };
    const { store } = setup({ [`PUT ${PATH}`]: [json(400, refusal)], [`GET ${PATH}`]: [json(200, view([]))] });
    const result = await store
      .getState()
      .setGuardian({ scope: 'cluster', guardian: { node_id: 'master', model: 'a' } });
    expect(result).toEqual({
      ok: false,
      failure: {
        kind: 'http',
        status: 400,
        message: refusal.error.message,
        param: 'guardian',
        code: 'guardian_not_multimodal',
      },
    });
  });

  it('DELETE sends the scope keys in a JSON body; 204 is success', async () => {
    const { store, calls } = setup({
      [`DELETE ${PATH}`]: [new Response(null, { status: 204 })],
      [`GET ${PATH}`]: [json(200, view([], 2))],
    });
    expect(await store.getState().removeGuardian({ scope: 'node', node_id: 'gpu-b' })).toEqual({
      ok: true,
      value: null,
    });
    expect(calls[0]).toMatchObject({
      method: 'DELETE',
      body: { scope: 'node', node_id: 'gpu-b' },
      contentType: 'application/json',
    });
    expect(store.getState().guardians.view?.version).toBe(2);
  });
});

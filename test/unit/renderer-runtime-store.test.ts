import { describe, expect, it } from 'vitest';
import { createConsoleClient, type FetchLike, REJECTED_MESSAGE } from '../../src-renderer/src/api/console-client';
import { createAppStore } from '../../src-renderer/src/store/app-store';
import type { RoutingViewWire, RuntimeHealth, UpstreamsAnswer } from '../../src-router/contract';
import { routingViewFixture } from '../support/renderer-fixtures';

// The `runtime` and `routing` slices and their console procedures, over a scripted fetch.

const URL_ = 'http://127.0.0.1:8080';
const TOKEN = 'console-token-for-tests';

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const health: RuntimeHealth = {
  published: true,
  blob: { host: 'h', version: '1', selfTests: [{ name: 'a', detail: 'd', ms: 1, status: 'pass' }] },
};

const routingView = (over: Partial<RoutingViewWire> = {}): RoutingViewWire => routingViewFixture(over, 'k');

const upstreams: UpstreamsAnswer = {
  upstreams: [
    {
      model: 'm',
      endpoint: 'http://e/v1',
      engine: null,
      status: 'untried',
      answered: 0,
      notAnswered: 0,
      lastAnswerAt: null,
      lastAnswer: 'never',
    },
  ],
};

/** Answers by path (each path a queue), so parallel reads do not depend on call order. */
function setup(answers: Record<string, (Response | Error)[]>) {
  const calls: { url: string; init?: RequestInit }[] = [];
  const fetch: FetchLike = async (url, init) => {
    calls.push({ url, init });
    const path = new URL(url).pathname.split('/').pop()!;
    const next = answers[path]?.shift();
    if (!next) throw new Error(`no scripted answer left for ${path}`);
    if (next instanceof Error) throw next;
    return next;
  };
  const store = createAppStore(URL_, { client: createConsoleClient({ url: URL_, token: TOKEN, fetch }), now: () => 7 });
  return { store, calls };
}

describe('runtime slice (RT-1, RT-6)', () => {
  it('reads runtime.health with the bearer token and mirrors the answer as given', async () => {
    const { store, calls } = setup({ 'runtime.health': [json(200, health)] });
    await store.getState().fetchRuntimeHealth();
    expect(calls.map((c) => c.url)).toEqual([`${URL_}/router/v1/console/runtime.health`]);
    expect(new Headers(calls[0].init?.headers).get('authorization')).toBe(`Bearer ${TOKEN}`);
    expect(calls[0].init?.method).toBe('GET');
    expect(store.getState().runtime).toEqual({ health, loading: false, failure: null, fetchedAt: 7 });
  });

  it('nothing published is an answer, not a failure', async () => {
    const { store } = setup({ 'runtime.health': [json(200, { published: false })] });
    await store.getState().fetchRuntimeHealth();
    expect(store.getState().runtime).toMatchObject({ health: { published: false }, failure: null });
  });

  it('?node=ID asks for another node’s blob', async () => {
    const calls: string[] = [];
    const client = createConsoleClient({
      url: URL_,
      token: TOKEN,
      fetch: async (u) => (calls.push(u), json(200, { published: false })),
    });
    await client.runtimeHealth('slave a');
    expect(calls).toEqual([`${URL_}/router/v1/console/runtime.health?node=slave%20a`]);
  });

  it('a transient failure keeps the last blob; a rejected token drops it; an answer of the wrong shape is invalid, a malformed blob field is dropped (RT-2)', async () => {
    const { store } = setup({
      'runtime.health': [
        json(200, health),
        new Error('ECONNREFUSED'),
        json(401, { error: { message: 'no', code: 'unauthorized' } }),
        json(200, { published: true, blob: { uptime: 'x', host: 'h' } }),
        json(200, { published: true, blob: 'x' }),
      ],
    });
    await store.getState().fetchRuntimeHealth();
    await store.getState().fetchRuntimeHealth();
    expect(store.getState().runtime).toMatchObject({ health, failure: { kind: 'unreachable' } });
    await store.getState().fetchRuntimeHealth();
    expect(store.getState().runtime).toMatchObject({
      health: null,
      failure: { kind: 'rejected', message: REJECTED_MESSAGE },
    });
    await store.getState().fetchRuntimeHealth();
    expect(store.getState().runtime).toMatchObject({ health: { published: true, blob: { host: 'h' } }, failure: null });
    expect(store.getState().runtime.health).toEqual({ published: true, blob: { host: 'h' } });
    await store.getState().fetchRuntimeHealth();
    expect(store.getState().runtime.failure).toMatchObject({ kind: 'invalid' });
    expect(store.getState().runtime.failure?.message).toContain('blob');
  });

  it('refreshRuntime re-reads health, routing, upstreams, the engines and the cluster (node picker), all GETs (Refresh only re-reads)', async () => {
    const { store, calls } = setup({
      'runtime.health': [json(200, health)],
      'runtime.routing': [json(200, routingView())],
      'runtime.upstreams': [json(200, upstreams)],
      nodes: [json(200, { nodes: [] })],
      models: [json(200, { models: [] })],
    });
    await store.getState().refreshRuntime();
    expect(calls.map((c) => `${c.init?.method} ${new URL(c.url).pathname}`).sort()).toEqual([
      'GET /router/v1/console/cluster/models',
      'GET /router/v1/console/cluster/nodes',
      'GET /router/v1/console/engines',
      'GET /router/v1/console/runtime.health',
      'GET /router/v1/console/runtime.routing',
      'GET /router/v1/console/runtime.upstreams',
    ]);
    expect(store.getState().routing).toMatchObject({
      view: routingView(),
      upstreams: upstreams.upstreams,
      failure: null,
      fetchedAt: 7,
    });
  });
});

describe('routing slice (ROUTE-3, 5, 8)', () => {
  it('setRouting posts the strategy only, then re-reads routing state', async () => {
    const after = routingView({ desired: { strategy: 'least-request', routes_engine: null }, inSync: false });
    const { store, calls } = setup({
      'runtime.setRouting': [json(200, { desired: { strategy: 'least-request' } })],
      'runtime.routing': [json(200, after)],
      'runtime.upstreams': [json(200, upstreams)],
    });
    const result = await store.getState().applyRouting({ strategy: 'least-request' });
    expect(result).toEqual({ ok: true, value: { desired: { strategy: 'least-request' } } });
    const post = calls.find((c) => c.url.endsWith('runtime.setRouting'))!;
    expect(post.init?.method).toBe('POST');
    expect(JSON.parse(String(post.init?.body))).toEqual({ strategy: 'least-request' });
    expect(new Headers(post.init?.headers).get('content-type')).toBe('application/json');
    expect(store.getState().routing).toMatchObject({ view: after, applying: false });
  });

  it('routesEngine goes out only when given', async () => {
    const bodies: unknown[] = [];
    const client = createConsoleClient({
      url: URL_,
      token: TOKEN,
      fetch: async (_u, init) => (
        bodies.push(JSON.parse(String(init?.body))), json(200, { desired: { strategy: 's' } })
      ),
    });
    await client.setRouting({ strategy: 's' });
    await client.setRouting({ strategy: 's', routesEngine: undefined });
    await client.setRouting({ strategy: 's', routesEngine: 'clutch-layers' });
    expect(bodies).toEqual([{ strategy: 's' }, { strategy: 's' }, { strategy: 's', routesEngine: 'clutch-layers' }]);
  });

  it('a 400 carries the node’s exact message and the field; a gate’s 403 is refused, not a rejected token', async () => {
    const message = 'Remove the empty entry and separate pairs with single commas.';
    const { store } = setup({
      'runtime.setRouting': [
        json(400, { error: { message, type: 'invalid_request_error', param: 'strategy', code: 'invalid_routing' } }),
        json(403, {
          error: {
            message:
              'Read-only on this deployment: routing writes are turned off (console.routing_writes_enabled is false).',
            type: 'permission_error',
            param: 'console.routing_writes_enabled',
            code: 'routing_read_only',
          },
        }),
      ],
      'runtime.routing': [json(200, routingView()), json(200, routingView({ writable: false }))],
      'runtime.upstreams': [json(200, upstreams), json(200, upstreams)],
    });
    const bad = await store.getState().applyRouting({ strategy: 'multi:a:1,,b:1' });
    expect(bad).toEqual({
      ok: false,
      failure: { kind: 'http', status: 400, message, param: 'strategy', code: 'invalid_routing' },
    });
    const refused = await store.getState().applyRouting({ strategy: 'least-request' });
    expect(refused.ok).toBe(false);
    if (!refused.ok)
      expect(refused.failure).toMatchObject({
        kind: 'refused',
        status: 403,
        message: expect.stringContaining('console.routing_writes_enabled'),
      });
    expect(store.getState().connection.status).toBe('connecting');
    expect(store.getState().routing.view?.writable).toBe(false);
  });

  it('a failed read keeps the last state and says why; upstreams fail on their own', async () => {
    const { store } = setup({
      'runtime.routing': [
        json(200, routingView()),
        json(500, { error: { message: 'boom', type: 'server_error', param: null, code: 'internal' } }),
      ],
      'runtime.upstreams': [json(200, upstreams), json(200, { upstreams: [] })],
    });
    await store.getState().fetchRouting();
    await store.getState().fetchRouting();
    expect(store.getState().routing).toMatchObject({
      view: routingView(),
      upstreams: [],
      failure: { kind: 'http', status: 500, message: 'boom (HTTP 500)' },
      upstreamsFailure: null,
    });
  });
});

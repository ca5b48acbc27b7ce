import { describe, expect, it, vi } from 'vitest';
import { createConsoleClient, type FetchLike, REJECTED_MESSAGE } from '../../src-renderer/src/api/console-client';
import { createAppStore } from '../../src-renderer/src/store/app-store';
import { startPolling, type Timers } from '../../src-renderer/src/store/polling';
import type { ConsoleModelList } from '../../src-router/contract';

const URL_ = 'http://127.0.0.1:8080';
const TOKEN = 'console-token-for-tests';

const list = (n = 2): ConsoleModelList => ({
  node: { nodeId: 'node-a', role: 'standalone', version: '0.1.0', startedAt: '2025-01-01T00:00:00.000Z' },
  models: Array.from({ length: n }, (_, i) => ({
    publicId: `m${i}`,
    localId: `m${i}`,
    nodeId: 'node-a',
    backend: 'sim',
    capabilities: ['text'],
    lane: 'text' as const,
    state: 'stopped' as const,
    configHash: `c${i}`.padEnd(64, '0'),
    modelHash: null,
    contextsize: null,
    idleUnloadMs: null,
    unloadsAt: null,
    lastError: null,
  })),
});

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** A store over a scripted fetch: each call takes the next answer (a Response, or an Error to throw). */
function setup(answers: (Response | Error)[], token = TOKEN) {
  const calls: { url: string; init?: RequestInit }[] = [];
  const fetch: FetchLike = async (url, init) => {
    calls.push({ url, init });
    const next = answers.shift();
    if (!next) throw new Error('no scripted answer left');
    if (next instanceof Error) throw next;
    return next;
  };
  let clock = 1_000;
  const store = createAppStore(URL_, {
    client: createConsoleClient({ url: `${URL_}/`, token, fetch }),
    now: () => clock,
  });
  return { store, calls, tick: (ms: number) => (clock += ms) };
}

describe('app store: connection and models slices', () => {
  it('starts connecting, with nothing read', () => {
    const { store } = setup([]);
    const s = store.getState();
    expect(s.connection).toEqual({ url: URL_, node: null, status: 'connecting', failure: null, lastOkAt: null });
    expect(s.models).toEqual({ items: null, loading: false, failure: null, fetchedAt: null });
  });

  it('refresh reads the console models with the bearer token and mirrors node and models', async () => {
    const { store, calls } = setup([json(200, list(2))]);
    await store.getState().refresh();
    expect(calls).toHaveLength(1);
    expect(calls[0].url).toBe(`${URL_}/router/v1/console/models`);
    expect(new Headers(calls[0].init?.headers).get('authorization')).toBe(`Bearer ${TOKEN}`);
    const s = store.getState();
    expect(s.connection).toMatchObject({
      status: 'online',
      failure: null,
      lastOkAt: 1_000,
      node: { nodeId: 'node-a', role: 'standalone' },
    });
    expect(s.models.items?.map((m) => m.publicId)).toEqual(['m0', 'm1']);
    expect(s.models).toMatchObject({ loading: false, failure: null, fetchedAt: 1_000 });
  });

  it('an empty list is a read, not a failure', async () => {
    const { store } = setup([json(200, list(0))]);
    await store.getState().refresh();
    expect(store.getState().models).toMatchObject({ items: [], failure: null });
  });

  it('401 says the token was rejected and shows nothing', async () => {
    const { store } = setup([
      json(200, list(1)),
      json(401, { error: { message: 'unauthorized', code: 'unauthorized' } }),
    ]);
    await store.getState().refresh();
    await store.getState().refresh();
    const s = store.getState();
    expect(s.models.failure).toEqual({ kind: 'rejected', status: 401, message: REJECTED_MESSAGE });
    expect(s.models.items).toBeNull();
    expect(s.connection).toMatchObject({ status: 'rejected', node: null });
  });

  it('a transient failure keeps the last list and node, and recovery clears the failure', async () => {
    const { store, tick } = setup([json(200, list(2)), new TypeError('fetch failed'), json(200, list(1))]);
    await store.getState().refresh();
    tick(5_000);
    await store.getState().refresh();
    let s = store.getState();
    expect(s.connection.status).toBe('offline');
    expect(s.connection.node?.nodeId).toBe('node-a');
    expect(s.models.failure).toMatchObject({ kind: 'unreachable', status: null });
    expect(s.models.failure?.message).toContain('fetch failed');
    expect(s.models.items).toHaveLength(2);
    expect(s.models.fetchedAt).toBe(1_000);
    tick(5_000);
    await store.getState().refresh();
    s = store.getState();
    expect(s.connection).toMatchObject({ status: 'online', failure: null, lastOkAt: 11_000 });
    expect(s.models).toMatchObject({ failure: null, fetchedAt: 11_000 });
    expect(s.models.items).toHaveLength(1);
  });

  it('a server error shows the console error message', async () => {
    const { store } = setup([json(500, { error: { message: 'registry not ready', code: 'internal' } })]);
    await store.getState().refresh();
    expect(store.getState().models.failure).toEqual({
      kind: 'http',
      status: 500,
      message: 'registry not ready (HTTP 500)',
    });
    expect(store.getState().connection.status).toBe('offline');
  });

  it('an answer outside the contract is refused, naming the field', async () => {
    const bad = list(1) as unknown as { models: Record<string, unknown>[] };
    bad.models[0].surprise = true;
    const { store } = setup([json(200, bad)]);
    await store.getState().refresh();
    const failure = store.getState().models.failure;
    expect(failure?.kind).toBe('invalid');
    expect(failure?.message).toContain('models.0');
    expect(store.getState().models.items).toBeNull();
  });

  it('without a token nothing is fetched, and the pill says no token was sent (issue #40 item 1)', async () => {
    const { store, calls } = setup([], '');
    await store.getState().refresh();
    expect(calls).toHaveLength(0);
    expect(store.getState().models.failure?.kind).toBe('no-token');
    expect(store.getState().connection.status).toBe('no-token');
  });

  it('concurrent refreshes share one request', async () => {
    const { store, calls } = setup([json(200, list(1))]);
    const first = store.getState().refresh();
    expect(store.getState().models.loading).toBe(true);
    await Promise.all([first, store.getState().refresh(), store.getState().fetchModels()]);
    expect(calls).toHaveLength(1);
    expect(store.getState().models.loading).toBe(false);
  });
});

describe('startPolling', () => {
  function fakeTimers() {
    const pending: { fn: () => void; ms: number }[] = [];
    const timers: Timers = {
      setTimeout: (fn, ms) => {
        const t = { fn, ms };
        pending.push(t);
        return t;
      },
      clearTimeout: (h) => {
        const i = pending.indexOf(h as (typeof pending)[number]);
        if (i >= 0) pending.splice(i, 1);
      },
    };
    const fire = () => pending.shift()?.fn();
    return { timers, pending, fire };
  }
  const flush = () => new Promise((r) => setTimeout(r, 0));

  it('runs at once, then every interval after the previous run ends', async () => {
    const { timers, pending, fire } = fakeTimers();
    const task = vi.fn(async () => undefined);
    const stop = startPolling(task, 5_000, timers);
    expect(task).toHaveBeenCalledTimes(1);
    await flush();
    expect(pending.map((p) => p.ms)).toEqual([5_000]);
    fire();
    expect(task).toHaveBeenCalledTimes(2);
    await flush();
    stop();
    expect(pending).toHaveLength(0);
  });

  it('keeps polling after a failed run and never overlaps runs', async () => {
    const { timers, pending, fire } = fakeTimers();
    let release!: () => void;
    const task = vi
      .fn<() => Promise<void>>()
      .mockRejectedValueOnce(new Error('down'))
      .mockImplementationOnce(() => new Promise<void>((r) => (release = r)));
    const stop = startPolling(task, 5_000, timers);
    await flush();
    fire();
    await flush();
    expect(task).toHaveBeenCalledTimes(2);
    expect(pending).toHaveLength(0); // the second run is still going: nothing scheduled
    release();
    await flush();
    expect(pending).toHaveLength(1);
    stop();
  });

  it('stopping during a run schedules nothing more', async () => {
    const { timers, pending } = fakeTimers();
    let release!: () => void;
    const stop = startPolling(() => new Promise<void>((r) => (release = r)), 5_000, timers);
    stop();
    release();
    await flush();
    expect(pending).toHaveLength(0);
  });
});

import { describe, expect, it } from 'vitest';
import { createConsoleClient, type FetchLike } from '../../src-renderer/src/api/console-client';
import { sameOrigin, waitForRestart } from '../../src-renderer/src/settings/restart-wait';
import { createAppStore } from '../../src-renderer/src/store/app-store';
import type { ConsoleModelList, HealthAnswer, SettingsView } from '../../src-router/contract';

// The `settings` slice and the console API of the node's settings (issue #13), over a scripted fetch; the wait for a
// restarted node on a clock the test drives (no timers).

const URL_ = 'http://127.0.0.1:8080';
const TOKEN = 'console-token-for-tests';
const PATH = '/router/v1/console/settings';
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const view = (role = 'standalone'): SettingsView => ({
  config: { cluster: { role, node_id: 'desk' } },
  schema: { type: 'object' },
  path: '/data/node.yaml',
  restartError: null,
});
const health = (startedAt: string, role = 'standalone'): HealthAnswer => ({
  status: 'ok',
  node_id: 'desk',
  role,
  version: '0.1.0',
  uptime_s: 0,
  started_at: startedAt,
});
const models = (role: string): ConsoleModelList => ({
  node: { nodeId: 'desk', role: role as 'master', version: '0.1.0', startedAt: 'b' },
  models: [],
});
const nodes = { nodes: [] };

function setup(answers: Record<string, (Response | (() => Response))[]>) {
  const calls: string[] = [];
  let clock = 0;
  const sleeps: number[] = [];
  const fetch: FetchLike = async (url, init) => {
    const key = `${init?.method ?? 'GET'} ${new URL(url).pathname}`;
    calls.push(key);
    const next = answers[key]?.shift();
    if (!next) throw new Error(`no scripted answer left for ${key}`);
    return typeof next === 'function' ? next() : next;
  };
  const store = createAppStore(URL_, {
    client: createConsoleClient({ url: URL_, token: TOKEN, fetch }),
    now: () => clock,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock += ms;
    },
  });
  return { store, calls, sleeps };
}

describe('settings slice', () => {
  it('reads the settings view; a 403 is a refusal (not an operator) that hides it, not a rejected token', async () => {
    const notOperator = {
      error: {
        message: 'only operators (console.operators) can read or change the node settings',
        type: 'permission_error',
        code: 'not_an_operator',
      },
    };
    const { store } = setup({ [`GET ${PATH}`]: [json(200, view()), json(403, notOperator)] });
    await store.getState().fetchSettings();
    expect(store.getState().settings).toMatchObject({ view: view(), failure: null, loading: false });
    await store.getState().fetchSettings();
    expect(store.getState().settings).toMatchObject({
      view: null,
      failure: { kind: 'refused', status: 403, code: 'not_an_operator' },
    });
    expect(store.getState().connection.status).toBe('connecting'); // the token itself is fine
  });

  it('a view off the contract is a failure naming the field', async () => {
    const { store } = setup({ [`GET ${PATH}`]: [json(200, { ...view(), path: 3 })] });
    await store.getState().fetchSettings();
    expect(store.getState().settings.failure?.message).toMatch(/path/);
  });

  it("a 400 comes back with the node's message and field path; nothing is read again", async () => {
    const refusal = {
      error: {
        message: 'config.server.port: Invalid input: expected number, received string',
        type: 'invalid_request_error',
        param: 'config.server.port',
        code: 'invalid_config',
      },
    };
    const { store, calls } = setup({ 'GET /health': [json(200, health('a'))], [`PUT ${PATH}`]: [json(400, refusal)] });
    const result = await store.getState().saveSettings({ server: { port: 'eighty' } });
    expect(result).toMatchObject({
      ok: false,
      failure: { kind: 'http', status: 400, param: 'config.server.port', message: refusal.error.message },
    });
    expect(calls).toEqual(['GET /health', `PUT ${PATH}`]);
    expect(store.getState().settings).toMatchObject({ saving: false, restart: { phase: 'idle' } });
  });

  it('a save that restarted the node waits for a node started after it, then reads everything again', async () => {
    const { store, calls, sleeps } = setup({
      // The node that takes the save; then it still answers once, is gone once, and the new one answers.
      'GET /health': [
        json(200, health('a')),
        json(200, health('a')),
        () => {
          throw new TypeError('fetch failed');
        },
        json(200, health('b', 'master')),
      ],
      [`PUT ${PATH}`]: [json(200, { written: true, restarted: true, url: URL_, path: '/data/node.yaml' })],
      [`GET ${PATH}`]: [json(200, view('master'))],
      'GET /router/v1/console/models': [json(200, models('master'))],
      'GET /router/v1/console/cluster/nodes': [json(200, nodes)],
      'GET /router/v1/console/cluster/models': [json(200, { models: [] })],
    });
    const pending = store.getState().saveSettings({ cluster: { role: 'master' } });
    expect(store.getState().settings.saving).toBe(true);
    const result = await pending;
    expect(result).toMatchObject({ ok: true, value: { restarted: true } });
    expect(sleeps.length).toBe(2);
    expect(calls.filter((c) => c === 'GET /health')).toHaveLength(4);
    expect(store.getState().settings).toMatchObject({
      view: view('master'),
      saving: false,
      restart: { phase: 'back', url: URL_ },
    });
    expect(store.getState().connection.node?.role).toBe('master');
    expect(store.getState().cluster.nodes).toEqual([]);
  });

  it('issue #26 item 2: a save whose settings could not start ends restored: the view says why and which file was put back', async () => {
    const failed: SettingsView = {
      ...view(),
      restartError: "two model configs have the local ID 'chat'",
      restoredFrom: '/data/node.yaml.bak',
    };
    const { store } = setup({
      'GET /health': [json(200, health('a')), json(200, health('b'))],
      [`PUT ${PATH}`]: [json(200, { written: true, restarted: true, url: URL_, path: '/data/node.yaml' })],
      [`GET ${PATH}`]: [json(200, failed)],
      'GET /router/v1/console/models': [json(200, models('standalone'))],
      'GET /router/v1/console/cluster/nodes': [json(200, nodes)],
      'GET /router/v1/console/cluster/models': [json(200, { models: [] })],
    });
    await store.getState().saveSettings({ models: { config_dir: '/data/dup' } });
    expect(store.getState().settings).toMatchObject({
      view: failed,
      restart: { phase: 'restored', url: URL_, message: failed.restartError },
    });
  });

  it('a node that does not come back in time is said so; one now at another origin is a link', async () => {
    const old = () => json(200, health('a'));
    const stuck = setup({
      'GET /health': Array.from({ length: 200 }, () => old),
      [`PUT ${PATH}`]: [json(200, { written: true, restarted: true, url: URL_, path: '/p' })],
    });
    await stuck.store.getState().saveSettings({});
    expect(stuck.store.getState().settings.restart).toMatchObject({
      phase: 'timeout',
      message: expect.stringMatching(/did not come back within 30 s/),
    });

    const moved = setup({
      'GET /health': [old()],
      [`PUT ${PATH}`]: [json(200, { written: true, restarted: true, url: 'http://127.0.0.1:9090', path: '/p' })],
    });
    await moved.store.getState().saveSettings({});
    expect(moved.store.getState().settings.restart).toEqual({
      phase: 'moved',
      url: 'http://127.0.0.1:9090',
      message: null,
      link: 'http://127.0.0.1:9090/#settings',
    });
    expect(moved.calls).toEqual(['GET /health', `PUT ${PATH}`]);
  });

  it('issue #40 item 1: a save that moves the node follows it with the one-time code the save answered', async () => {
    const followed: [string, string][] = [];
    const phases: string[] = [];
    const answer = { written: true, restarted: true, url: 'http://127.0.0.1:9090', path: '/p', code: 'c0de/+x' };
    const build = (arrives: boolean) => {
      const store = createAppStore(URL_, {
        client: createConsoleClient({
          url: URL_,
          token: TOKEN,
          fetch: async (url, init) =>
            `${init?.method ?? 'GET'} ${new URL(url).pathname}` === `PUT ${PATH}`
              ? json(200, answer)
              : json(200, health('a')),
        }),
        now: () => 0,
        followMove: async (to, code) => {
          phases.push(store.getState().settings.restart.phase);
          followed.push([to, code]);
          return arrives;
        },
      });
      return store;
    };
    const arriving = build(true);
    await arriving.getState().saveSettings({});
    expect(followed).toEqual([['http://127.0.0.1:9090', 'c0de/+x']]);
    expect(phases).toEqual(['moving']);
    // The page is on its way: it stays "moving" (nothing to read again here).
    expect(arriving.getState().settings.restart).toMatchObject({ phase: 'moving', url: 'http://127.0.0.1:9090' });
    // The node did not come back in time: a link with the code (good once, 10 minutes).
    const stuck = build(false);
    await stuck.getState().saveSettings({});
    expect(stuck.getState().settings.restart).toEqual({
      phase: 'moved',
      url: 'http://127.0.0.1:9090',
      message: null,
      link: 'http://127.0.0.1:9090/?code=c0de%2F%2Bx#settings',
    });
  });

  it('an unchanged config restarts nothing and reads nothing again', async () => {
    const { store, calls } = setup({
      'GET /health': [json(200, health('a'))],
      [`PUT ${PATH}`]: [json(200, { written: false, restarted: false, url: URL_, path: '/p' })],
    });
    expect(await store.getState().saveSettings({})).toMatchObject({ ok: true, value: { written: false } });
    expect(calls).toEqual(['GET /health', `PUT ${PATH}`]);
    expect(store.getState().settings.restart.phase).toBe('idle');
  });
});

describe('waiting for a restarted node', () => {
  it('any answer counts when the node before could not be read; the deadline is on the given clock', async () => {
    let clock = 0;
    const ok = await waitForRestart({
      probe: async () => ({ ok: true, value: health('x') }),
      before: null,
      now: () => clock,
      sleep: async (ms) => void (clock += ms),
    });
    expect(ok).toEqual({ ok: true, health: health('x') });
    const down = await waitForRestart({
      probe: async () => ({
        ok: false,
        failure: { kind: 'unreachable', status: null, message: 'node unreachable: fetch failed' },
      }),
      before: 'a',
      now: () => clock,
      sleep: async (ms) => void (clock += ms),
      timeoutMs: 1_000,
      everyMs: 100,
    });
    expect(down).toEqual({
      ok: false,
      message: 'the node did not come back within 1 s (last: node unreachable: fetch failed)',
    });
  });

  it('same origin: the console can follow the node', () => {
    expect(sameOrigin('http://127.0.0.1:8080', 'http://127.0.0.1:8080/')).toBe(true);
    expect(sameOrigin('http://127.0.0.1:8080', 'http://localhost:8080')).toBe(false);
    expect(sameOrigin('nope', URL_)).toBe(false);
  });
});

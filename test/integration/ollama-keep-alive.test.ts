import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleModelList } from '../../src-router/contract';
import { eventually, startNode, type TestNode } from '../support/node-harness';

// Issue #11: Ollama's keep_alive and a model config's ttl — the load call, unloading after a request, idle unload —
// as /api/ps and the console models API (the Models screen) show them, on a real node with real sim engines.
const fast = { load_time: '100ms', token_time: '2ms', tokens: 4 };
const TEN_MINUTES = 600_000;

interface PsModel {
  name: string;
  expires_at: string | null;
}

describe('Ollama keep_alive and model ttl (issue #11)', () => {
  let node: TestNode;
  let ollama: Ollama;
  const ps = async () => ((await (await fetch(`${node.url}/api/ps`)).json()) as { models: PsModel[] }).models;
  const loaded = async (name: string) => (await ps()).some((m) => m.name === name);
  const consoleModel = async (localId: string) =>
    (await node.console<ConsoleModelList>('/router/v1/console/models')).models.find((m) => m.localId === localId)!;
  const lanePid = async () =>
    (await node.console<{ lanes: { lane: string; pid: number | null }[] }>('/router/v1/console/lanes')).lanes.find(
      (l) => l.lane === 'text',
    )!.pid;
  const post = (path: string, body: unknown) =>
    fetch(`${node.url}${path}`, { method: 'POST', body: JSON.stringify(body) });

  beforeAll(async () => {
    node = await startNode({
      models: {
        chat: { name: 'sim-chat', backend: 'sim', capabilities: ['text'], contextsize: 2048, sim: fast },
        keeper: {
          name: 'sim-keeper',
          backend: 'sim',
          capabilities: ['text'],
          contextsize: 2048,
          ttl: '10m',
          sim: fast,
        },
        pair: { name: 'sim-pair', backend: 'sim', capabilities: ['text'], contextsize: 2048, parallel: 2, sim: fast },
      },
    });
    ollama = new Ollama({ host: node.url });
  });
  afterAll(() => node?.stop());

  it('a generate without prompt and a chat without messages load the model and return at once, generating nothing', async () => {
    expect(await loaded('sim-chat')).toBe(false);
    const gen = await ollama.generate({ model: 'sim-chat', prompt: '' });
    expect(gen).toMatchObject({ model: 'sim-chat', done: true, done_reason: 'load', response: '' });
    expect(gen.eval_count).toBeUndefined();
    expect(gen.load_duration).toBeGreaterThan(0);
    expect(gen.total_duration).toBeGreaterThanOrEqual(gen.load_duration);
    expect(await loaded('sim-chat')).toBe(true);
    expect((await consoleModel('chat')).state).toBe('ready');
    const chat = await ollama.chat({ model: 'sim-chat', messages: [] });
    expect(chat).toMatchObject({ done: true, done_reason: 'load', message: { role: 'assistant', content: '' } });
    // Loaded already: no load this time.
    expect(chat.load_duration).toBe(0);
    const raw = (await (await post('/api/chat', { model: 'sim-chat' })).json()) as Record<string, unknown>;
    expect(raw.done_reason).toBe('load');
    // An unknown model is still an Ollama-shaped 404.
    const nope = await post('/api/generate', { model: 'nope' });
    expect(nope.status).toBe(404);
    expect(typeof ((await nope.json()) as { error: unknown }).error).toBe('string');
  });

  it('a keep_alive duration sets how long the model stays loaded while idle: /api/ps and the Models screen show it', async () => {
    const before = Date.now();
    await ollama.generate({ model: 'sim-chat', prompt: '', keep_alive: '10m' });
    const after = Date.now();
    const m = (await ps()).find((x) => x.name === 'sim-chat')!;
    const expires = Date.parse(m.expires_at!);
    expect(expires).toBeGreaterThanOrEqual(before + TEN_MINUTES);
    expect(expires).toBeLessThanOrEqual(Date.now() + TEN_MINUTES);
    const row = await consoleModel('chat');
    expect(row.idleUnloadMs).toBe(TEN_MINUTES);
    expect(Date.parse(row.unloadsAt!)).toBeGreaterThanOrEqual(before + TEN_MINUTES);
    expect(Date.parse(row.unloadsAt!)).toBeLessThanOrEqual(after + TEN_MINUTES);
    // keep_alive -1: loaded for good.
    await ollama.generate({ model: 'sim-chat', prompt: '', keep_alive: -1 });
    expect((await ps()).find((x) => x.name === 'sim-chat')!.expires_at).toBeNull();
    expect((await consoleModel('chat')).idleUnloadMs).toBeNull();
  });

  it('keep_alive 0 answers the request, then unloads the model; the next load starts from the config again', async () => {
    const chat = await ollama.chat({
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
      keep_alive: 0,
      options: { num_predict: 3 },
    });
    expect(chat).toMatchObject({ done: true, eval_count: 3 });
    // Gone from /api/ps at once; the Models screen shows it stopping, then stopped.
    await eventually(async () => !(await loaded('sim-chat')) && (await consoleModel('chat')).state === 'stopped', {
      what: 'sim-chat unloaded after its keep_alive 0 request',
    });
    const row = await consoleModel('chat');
    expect(row.idleUnloadMs).toBeNull();
    expect(row.unloadsAt).toBeNull();
  });

  it('the unload call (keep_alive 0, no prompt) unloads a loaded model', async () => {
    await ollama.generate({ model: 'sim-chat', prompt: '' });
    expect(await loaded('sim-chat')).toBe(true);
    const res = await ollama.generate({ model: 'sim-chat', prompt: '', keep_alive: 0 });
    expect(res).toMatchObject({ done: true, done_reason: 'unload' });
    await eventually(async () => !(await loaded('sim-chat')) && (await consoleModel('chat')).state === 'stopped', {
      what: 'sim-chat unloaded by the unload call',
    });
    // Unloading what is not loaded changes nothing: its next load keeps the config's (absent) ttl.
    expect((await ollama.generate({ model: 'sim-chat', prompt: '', keep_alive: 0 })).done_reason).toBe('unload');
    expect((await consoleModel('chat')).idleUnloadMs).toBeNull();
  });

  it('a model config ttl: the Models screen shows it, the idle engine unloads at its time, a request keep_alive overrides it', async () => {
    expect((await consoleModel('keeper')).idleUnloadMs).toBe(TEN_MINUTES);
    expect((await consoleModel('keeper')).unloadsAt).toBeNull();
    const before = Date.now();
    await ollama.generate({ model: 'sim-keeper', prompt: 'x', stream: false, options: { num_predict: 1 } });
    const row = await consoleModel('keeper');
    expect(row.state).toBe('ready');
    expect(Date.parse(row.unloadsAt!)).toBeGreaterThanOrEqual(before + TEN_MINUTES);
    expect(Date.parse((await ps()).find((m) => m.name === 'sim-keeper')!.expires_at!)).toBe(Date.parse(row.unloadsAt!));
    // A short keep_alive on a request: unloaded once idle for that long, then back to the config's ttl.
    await ollama.generate({
      model: 'sim-keeper',
      prompt: 'x',
      stream: false,
      keep_alive: '200ms',
      options: { num_predict: 1 },
    });
    await eventually(async () => !(await loaded('sim-keeper')) && (await consoleModel('keeper')).state === 'stopped', {
      what: 'sim-keeper unloaded after 200ms idle',
    });
    expect((await consoleModel('keeper')).idleUnloadMs).toBe(TEN_MINUTES);
  });

  it('never unloads while a job runs: a short request ending inside a long stream leaves its engine up until both are done', async () => {
    // Two sequences at once: the short request ends while the stream still runs on the same engine.
    const stream = await ollama.chat({
      model: 'sim-pair',
      messages: [{ role: 'user', content: 'tell me' }],
      stream: true,
      keep_alive: '1ms',
      options: { num_predict: 300 },
    });
    const parts = stream[Symbol.asyncIterator]();
    const first = await parts.next();
    expect(first.done).toBe(false);
    const pid = await lanePid();
    const short = await ollama.generate({
      model: 'sim-pair',
      prompt: 'x',
      stream: false,
      keep_alive: '1ms',
      options: { num_predict: 1 },
    });
    expect(short.done).toBe(true);
    let last: { done: boolean; eval_count?: number } | undefined;
    for (let p = await parts.next(); !p.done; p = await parts.next()) last = p.value;
    // Had the short request's end (1 ms idle unload) stopped the engine, the stream would have broken off.
    expect(last).toMatchObject({ done: true, done_reason: 'length', eval_count: 300 });
    expect(pid).not.toBeNull();
    await eventually(async () => !(await loaded('sim-pair')), { what: 'sim-pair unloaded once both requests ended' });
  });
});

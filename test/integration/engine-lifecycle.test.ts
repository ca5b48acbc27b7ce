import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, pidAlive, startNode, type TestNode } from '../support/node-harness';

interface Lane {
  lane: string;
  loaded: string | null;
  state: string;
  pid: number | null;
  port: number | null;
  inflight: number;
  queued: number;
}
interface ModelRow {
  localId: string;
  state: string;
  modelHash: string | null;
  configHash: string;
}

// Supervision with real engine processes: lazy start, switch per lane, crash mid-request, cancel at the engine.
describe('engine supervision', () => {
  let node: TestNode;
  let openai: OpenAI;
  const lanes = async () => (await node.console<{ lanes: Lane[] }>('/router/v1/console/lanes')).lanes;
  const lane = async (name: string) => (await lanes()).find((l) => l.lane === name)!;
  const state = async (localId: string) =>
    (await node.console<{ models: ModelRow[] }>('/router/v1/console/models')).models.find((m) => m.localId === localId)!
      .state;
  const simStats = async (port: number) =>
    (await (await fetch(`http://127.0.0.1:${port}/sim/stats`)).json()) as {
      cancelled: number;
      requests: number;
      active: number;
    };

  beforeAll(async () => {
    node = await startNode({
      config: { models: { startup_model: 'paint-a' } },
      models: {
        'text-a': {
          name: 'text-a',
          backend: 'sim',
          capabilities: ['text'],
          sim: { load_time: '300ms', token_time: '5ms' },
        },
        'text-b': {
          name: 'text-b',
          backend: 'sim',
          capabilities: ['text'],
          sim: { load_time: '300ms', token_time: '5ms' },
        },
        'paint-a': {
          name: 'paint-a',
          backend: 'sim',
          capabilities: ['image'],
          sim: { load_time: '100ms', step_time: '50ms' },
        },
      },
    });
    openai = new OpenAI({ baseURL: `${node.url}/v1`, apiKey: 'x', maxRetries: 0 });
  });
  afterAll(() => node?.stop());

  it('loads the startup model at boot and nothing else (lazy)', async () => {
    await eventually(async () => (await state('paint-a')) === 'ready', { what: 'startup model ready' });
    expect(await state('text-a')).toBe('stopped');
    expect((await lane('text')).loaded).toBeNull();
  });

  it('starts an engine on first request, then switches the text lane while the image lane keeps serving', async () => {
    await openai.chat.completions.create({
      model: 'text-a',
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 2,
    });
    expect(await lane('text')).toMatchObject({ loaded: 'text-a', state: 'ready' });
    const pidA = (await lane('text')).pid;
    // A long image job (40 steps × 50 ms) runs while the text lane switches from text-a to text-b.
    const image = openai.images.generate({ model: 'paint-a', prompt: 'x', size: '64x64', steps: 40 } as never);
    await eventually(async () => (await lane('image')).inflight === 1, { what: 'image in flight' });
    await openai.chat.completions.create({
      model: 'text-b',
      messages: [{ role: 'user', content: 'y' }],
      max_tokens: 2,
    });
    expect(await lane('text')).toMatchObject({ loaded: 'text-b', state: 'ready' });
    expect((await lane('text')).pid).not.toBe(pidA);
    expect(await state('text-a')).toBe('stopped');
    expect((await lane('image')).inflight).toBe(1); // still generating: the switch did not wait for the other lane
    const img = await image;
    expect(img.data).toHaveLength(1);
  });

  it('requests for the loaded model wait behind a pending switch instead of starving it', async () => {
    const results = await Promise.all([
      openai.chat.completions.create({ model: 'text-a', messages: [{ role: 'user', content: '1' }], max_tokens: 2 }),
      openai.chat.completions.create({ model: 'text-b', messages: [{ role: 'user', content: '2' }], max_tokens: 2 }),
      openai.chat.completions.create({ model: 'text-a', messages: [{ role: 'user', content: '3' }], max_tokens: 2 }),
    ]);
    expect(results.map((r) => r.model)).toEqual(['text-a', 'text-b', 'text-a']);
  });

  it('an engine crashing mid-request gives a clear 502; the next request restarts it', async () => {
    const res = await fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'text-a',
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 50,
        sim_fail: 'crash',
      }),
    });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('engine_crashed');
    expect(body.error.message).toMatch(/engine for model 'text-a' exited during the request/);
    expect(await state('text-a')).toBe('failed');
    const again = await openai.chat.completions.create({
      model: 'text-a',
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 2,
    });
    expect(again.model).toBe('text-a');
    expect(await state('text-a')).toBe('ready');
  });

  it('a crash in the middle of a stream ends the stream with an in-band error', async () => {
    const res = await fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'text-a',
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 50,
        stream: true,
        sim_fail: 'crash',
      }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/"code":"engine_crashed"/);
    expect(text).not.toContain('[DONE]');
  });

  it('a client that disconnects cancels its request at the engine', async () => {
    await openai.chat.completions.create({
      model: 'text-a',
      messages: [{ role: 'user', content: 'warm' }],
      max_tokens: 1,
    });
    const port = (await lane('text')).port!;
    const before = await simStats(port);
    const ctl = new AbortController();
    const stream = await openai.chat.completions.create(
      { model: 'text-a', messages: [{ role: 'user', content: 'long' }], max_tokens: 5000, stream: true },
      { signal: ctl.signal },
    );
    let got = 0;
    // Stop reading after three content chunks and abort; chunks already buffered are never read (no count after
    // the abort: how many more were in flight is a race, not behaviour).
    await (async () => {
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta?.content) got++;
        if (got === 3) {
          ctl.abort();
          break;
        }
      }
    })().catch(() => {});
    expect(got).toBe(3);
    await eventually(async () => (await simStats(port)).cancelled === before.cancelled + 1, {
      what: 'engine saw the cancel',
    });
    await eventually(async () => (await simStats(port)).active === 0, { what: 'engine idle after the cancel' });
    await eventually(async () => (await lane('text')).inflight === 0, { what: 'lease released' });
    const db = await node.console<{ models: ModelRow[] }>('/router/v1/console/models');
    expect(db.models.every((m) => m.configHash.length === 64)).toBe(true);
  });

  it('engines die with their supervisor even when it is killed outright', async () => {
    const pids = (await lanes()).map((l) => l.pid).filter((p): p is number => p !== null);
    expect(pids.length).toBeGreaterThanOrEqual(2);
    node.proc.kill('SIGKILL');
    await eventually(() => pids.every((p) => !pidAlive(p)), { what: 'engines gone after the router was killed' });
  });
});

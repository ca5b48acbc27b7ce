import Database from 'better-sqlite3';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import type { ModelConfigInput, NodeConfigInput } from '../../src-router/config';
import { eventually, startNode, tempDir, wavFile, type TestNode } from '../support/node-harness';
import { realEngines, REAL_ENGINES_TIMEOUT_MS } from '../support/real-engines';

// Split transcription on real whisper-servers (built by `routerdesk engines build`, a tiny generated model that
// transcribes anything into some text): two slave nodes each with one, a master with none. Selector-less requests
// spread over the idle nodes and an explicit model still works (STT-1..5); a lane is ready only once whisper-server's
// own /health says so (HEALTH-3); the OpenAI answer formats keep their shapes.
const TOKEN = 'real-stt-token-0123456789';

interface Lane { lane: string; loaded: string | null; state: string; port: number | null }

describe('selector-less STT on two nodes with real whisper-servers', () => {
  let master: TestNode;
  const slaves: TestNode[] = [];
  let openai: OpenAI;
  const masterDir = tempDir('routerdesk-real-stt-');

  const transcribe = async (model: string) => openai.audio.transcriptions.create({ model, file: await toFile(wavFile(1), 'a.wav') });
  const servedBy = () => {
    const db = new Database(join(masterDir, 'store', 'router.db'), { readonly: true });
    try {
      return db.prepare("SELECT node_id, model, outcome FROM request_analytics WHERE endpoint = 'transcription' ORDER BY id").all() as { node_id: string; model: string; outcome: string }[];
    } finally {
      db.close();
    }
  };
  const servedOnce = (n: number) => eventually(() => servedBy().length >= n && servedBy(), { what: `${n} transcription rows` });

  beforeAll(async () => {
    const { whisperServer, whisperModel } = await realEngines();
    const [pm, pa, pb] = [await freePort(), await freePort(), await freePort()];
    const slave = (id: string, port: number): NodeConfigInput => ({
      server: { port },
      cluster: { role: 'slave', node_id: id, token: TOKEN, master_url: `http://127.0.0.1:${pm}`, public_url: `http://127.0.0.1:${port}`, sync_interval: '500ms' },
    });
    const ears: ModelConfigInput = {
      name: 'ears', backend: 'whisper-server', capabilities: ['transcription'], model: whisperModel,
      command: `'${whisperServer}' --host \${HOST} --port \${PORT} -m \${MODEL} -t 1`,
    };
    slaves.push(...(await Promise.all([startNode({ models: { ears }, config: slave('node-a', pa) }), startNode({ models: { ears }, config: slave('node-b', pb) })])));
    master = await startNode({
      dir: masterDir,
      models: { chat: { name: 'chat', backend: 'sim', capabilities: ['text'] } },
      config: { server: { port: pm }, cluster: { role: 'master', node_id: 'master', token: TOKEN, slave_urls: [`http://127.0.0.1:${pa}`, `http://127.0.0.1:${pb}`], health_interval: '500ms' } },
    });
    openai = new OpenAI({ baseURL: `${master.url}/v1`, apiKey: 'x', maxRetries: 0, timeout: 120_000 });
    await eventually(async () => (await master.console<{ nodes: { healthy: boolean }[] }>('/router/v1/console/cluster/nodes')).nodes.every((n) => n.healthy), { what: 'cluster healthy' });
  }, REAL_ENGINES_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([master?.stop(), ...slaves.map((s) => s.stop())]);
  });

  it('two simultaneous requests with no model go to the two idle nodes, one each (STT-2, STT-4)', async () => {
    const [a, b] = await Promise.all([transcribe('auto'), transcribe('auto')]);
    expect(typeof a.text).toBe('string');
    expect(typeof b.text).toBe('string');
    const rows = await servedOnce(2);
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((r) => r.node_id))).toEqual(new Set(['node-a', 'node-b']));
    expect(rows.every((r) => r.model === 'ears' && r.outcome === 'ok')).toBe(true);
  });

  it('each loaded lane is ready, and its whisper-server’s own /health says ok (HEALTH-3)', async () => {
    for (const s of slaves) {
      const { lanes } = await s.console<{ lanes: Lane[] }>('/router/v1/console/lanes');
      const lane = lanes.find((l) => l.loaded === 'ears')!;
      expect(lane.state).toBe('ready');
      const health = await fetch(`http://127.0.0.1:${lane.port}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
    }
  });

  it('then a loaded remote configuration serves a request with no model field at all (STT-2)', async () => {
    const form = new FormData();
    form.append('file', new Blob([wavFile(0.5)]), 'a.wav');
    const res = await fetch(`${master.url}/v1/audio/transcriptions`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    expect(typeof ((await res.json()) as { text: unknown }).text).toBe('string');
    expect(await servedOnce(3)).toHaveLength(3);
  });

  it('an explicit model works; the text-only master is never chosen (STT-5)', async () => {
    expect(typeof (await transcribe('ears')).text).toBe('string');
    const rows = await servedOnce(4);
    expect(rows.every((r) => r.node_id !== 'master')).toBe(true);
  });

  it('the OpenAI answer formats keep their shapes: json, verbose_json, text', async () => {
    const json = await openai.audio.transcriptions.create({ model: 'ears', file: await toFile(wavFile(1), 'a.wav'), response_format: 'json' });
    expect(Object.keys(json)).toEqual(['text']);
    const verbose = await openai.audio.transcriptions.create({ model: 'ears', file: await toFile(wavFile(1), 'a.wav'), response_format: 'verbose_json' });
    expect(verbose).toMatchObject({ task: 'transcribe', language: expect.any(String), duration: expect.any(Number), text: expect.any(String) });
    expect(Array.isArray(verbose.segments)).toBe(true);
    for (const s of verbose.segments ?? []) expect(s).toMatchObject({ id: expect.any(Number), start: expect.any(Number), end: expect.any(Number), text: expect.any(String) });
    const text = await openai.audio.transcriptions.create({ model: 'ears', file: await toFile(wavFile(1), 'a.wav'), response_format: 'text' });
    expect(typeof text).toBe('string');
  });

  it('audio whisper-server cannot read: its 400 reaches the client as an OpenAI error naming the model’s engine', async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('not a wav file at all, just text')]), 'a.wav');
    form.append('model', 'ears');
    const res = await fetch(`${master.url}/v1/audio/transcriptions`, { method: 'POST', body: form });
    const body = (await res.json()) as { error: { message: string; type: string; code: string } };
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(body.error.message).toContain("engine for model 'ears' answered 400: Invalid request");
  });
});

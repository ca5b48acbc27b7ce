import { join } from 'node:path';
import Database from 'better-sqlite3';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import type { NodeConfigInput } from '../../src-router/config';
import { eventually, startNode, type TestNode, tempDir, wavFile } from '../support/node-harness';

// Selector-less transcription across real nodes (STT-1..5): reservations spread simultaneous requests over idle nodes.
const TOKEN = 'stt-cluster-token-0123456789';

describe('selector-less STT across a cluster', () => {
  let master: TestNode;
  const slaves: TestNode[] = [];
  let openai: OpenAI;
  const masterDir = tempDir();

  beforeAll(async () => {
    const [pm, pa, pb] = [await freePort(), await freePort(), await freePort()];
    const slave = (id: string, port: number): NodeConfigInput => ({
      server: { port },
      cluster: {
        role: 'slave',
        node_id: id,
        token: TOKEN,
        master_url: `http://127.0.0.1:${pm}`,
        public_url: `http://127.0.0.1:${port}`,
        sync_interval: '500ms',
      },
    });
    const whisper = {
      ears: {
        name: 'ears',
        backend: 'sim' as const,
        capabilities: ['transcription' as const],
        sim: { load_time: '400ms', audio_time_per_second: '300ms' },
      },
    };
    slaves.push(
      ...(await Promise.all([
        startNode({ models: whisper, config: slave('node-a', pa) }),
        startNode({ models: whisper, config: slave('node-b', pb) }),
      ])),
    );
    master = await startNode({
      dir: masterDir,
      models: { chat: { name: 'chat', backend: 'sim', capabilities: ['text'] } },
      config: {
        server: { port: pm },
        cluster: {
          role: 'master',
          node_id: 'master',
          token: TOKEN,
          slave_urls: [`http://127.0.0.1:${pa}`, `http://127.0.0.1:${pb}`],
          health_interval: '500ms',
        },
      },
    });
    openai = new OpenAI({ baseURL: `${master.url}/v1`, apiKey: 'x', maxRetries: 0 });
    await eventually(
      async () =>
        (await master.console<{ nodes: { healthy: boolean }[] }>('/router/v1/console/cluster/nodes')).nodes.every(
          (n) => n.healthy,
        ),
      { what: 'cluster healthy' },
    );
  });
  afterAll(async () => {
    await Promise.all([master?.stop(), ...slaves.map((s) => s.stop())]);
  });

  const transcribe = async (model: string) =>
    openai.audio.transcriptions.create({ model, file: await toFile(wavFile(1), 'a.wav') });
  const servedBy = () => {
    const db = new Database(join(masterDir, 'store', 'router.db'), { readonly: true });
    try {
      return db
        .prepare("SELECT node_id, model FROM request_analytics WHERE endpoint = 'transcription' ORDER BY id")
        .all() as { node_id: string; model: string }[];
    } finally {
      db.close();
    }
  };
  /** The rows once there are `n` (analytics rows are written in batches off the request path, issue #9). */
  const servedOnce = (n: number) =>
    eventually(() => servedBy().length >= n && servedBy(), { what: `${n} transcription rows` });

  it('two simultaneous requests with no model go to the two idle nodes, not both to one', async () => {
    const [a, b] = await Promise.all([transcribe('auto'), transcribe('auto')]);
    expect(a.text.length).toBeGreaterThan(0);
    expect(b.text.length).toBeGreaterThan(0);
    const rows = await servedOnce(2);
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((r) => r.node_id))).toEqual(new Set(['node-a', 'node-b']));
    expect(rows.every((r) => r.model === 'ears')).toBe(true);
  });

  it('then a loaded, least busy remote configuration is preferred; the form field may be left out entirely', async () => {
    const form = new FormData();
    form.append('file', new Blob([wavFile(0.5)]), 'a.wav');
    const res = await fetch(`${master.url}/v1/audio/transcriptions`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    expect(await servedOnce(3)).toHaveLength(3);
  });

  it('an explicit model still works and a text-only cluster member is never chosen for STT', async () => {
    expect((await transcribe('ears')).text.length).toBeGreaterThan(0);
    const rows = await servedOnce(4);
    expect(rows.every((r) => r.node_id !== 'master')).toBe(true);
  });
});

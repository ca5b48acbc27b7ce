import { createServer, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src-router/backends';
import type { ModelConfigInput, NodeConfigInput } from '../../src-router/config';
import { type RuntimeStatus, runtimeStatusSchema } from '../../src-router/contract';
import { eventually, startNode, type TestNode, tempDir, wavFile } from '../support/node-harness';
import { REAL_ENGINES_TIMEOUT_MS, realEngines } from '../support/real-engines';

// Split transcription on real whisper-servers (built by `routerdesk engines build`, a tiny generated model that
// transcribes anything into some text): two slave nodes each with one, a master with none. Selector-less requests
// spread over the idle nodes and an explicit model still works (STT-1..5); a lane is ready only once whisper-server's
// own /health says so (HEALTH-3); the OpenAI answer formats keep their shapes. node-b is reached through a relay that
// can refuse its runtime status (as a node that does not take the cluster token would) while passing everything else.
// Ollama's API has no transcription endpoint, so a node has none under /api either: transcription is OpenAI-shaped only.
const TOKEN = 'real-stt-token-0123456789';
/** Long enough that whisper-server is still on the busy requests when the next one is placed. */
const LONG_SECONDS = 60;

/** An HTTP relay to `port` that answers 401 to runtime-status reads while `refuseStatus` is set. */
function statusRelay(port: number) {
  const relay = { refuseStatus: false };
  const server = createServer((req, res) => {
    if (relay.refuseStatus && req.url?.startsWith('/router/v1/node/runtime-status')) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: 'missing or wrong cluster token', type: 'authentication_error', code: 'unauthorized' },
        }),
      );
      return;
    }
    const out = httpRequest(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  return Object.assign(relay, { server });
}

interface Lane {
  lane: string;
  loaded: string | null;
  state: string;
  port: number | null;
}

describe('selector-less STT on two nodes with real whisper-servers', () => {
  let master: TestNode;
  const slaves: TestNode[] = [];
  let openai: OpenAI;
  const masterDir = tempDir('routerdesk-real-stt-');

  const transcribe = async (model: string) =>
    openai.audio.transcriptions.create({ model, file: await toFile(wavFile(1), 'a.wav') });
  const servedBy = () => {
    const db = new Database(join(masterDir, 'store', 'router.db'), { readonly: true });
    try {
      return db
        .prepare("SELECT node_id, model, outcome FROM request_analytics WHERE endpoint = 'transcription' ORDER BY id")
        .all() as { node_id: string; model: string; outcome: string }[];
    } finally {
      db.close();
    }
  };
  const servedOnce = (n: number) =>
    eventually(() => servedBy().length >= n && servedBy(), { what: `${n} transcription rows` });
  let relay: ReturnType<typeof statusRelay>;
  /** A selector-less request to the master; the node that ran it, from the answer's `x-routerdesk-node`. */
  const autoOn = async (): Promise<string> => {
    const form = new FormData();
    form.append('file', new Blob([wavFile(1)]), 'a.wav');
    form.append('model', 'auto');
    const res = await fetch(`${master.url}/v1/audio/transcriptions`, { method: 'POST', body: form });
    expect(res.status, await res.clone().text()).toBe(200);
    await res.json();
    return res.headers.get('x-routerdesk-node') ?? '';
  };
  const statusOf = async (node: TestNode): Promise<RuntimeStatus> => {
    const res = await fetch(`${node.url}/router/v1/node/runtime-status`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(200);
    return runtimeStatusSchema.parse(await res.json());
  };

  beforeAll(async () => {
    const { whisperServer, whisperModel } = await realEngines();
    const [pm, pa, pb, pr] = [await freePort(), await freePort(), await freePort(), await freePort()];
    relay = statusRelay(pb);
    await new Promise<void>((resolve) => relay.server.listen(pr, '127.0.0.1', resolve));
    const slave = (id: string, port: number, publicPort = port): NodeConfigInput => ({
      server: { port },
      cluster: {
        role: 'slave',
        node_id: id,
        token: TOKEN,
        master_url: `http://127.0.0.1:${pm}`,
        public_url: `http://127.0.0.1:${publicPort}`,
        sync_interval: '500ms',
      },
    });
    const ears: ModelConfigInput = {
      name: 'ears',
      backend: 'whisper-server',
      capabilities: ['transcription'],
      model: whisperModel,
      command: `'${whisperServer}' --host \${HOST} --port \${PORT} -m \${MODEL} -t 1`,
    };
    slaves.push(
      ...(await Promise.all([
        startNode({ models: { ears }, config: slave('node-a', pa) }),
        startNode({ models: { ears }, config: slave('node-b', pb, pr) }),
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
          slave_urls: [`http://127.0.0.1:${pa}`, `http://127.0.0.1:${pr}`],
          health_interval: '500ms',
        },
      },
    });
    openai = new OpenAI({ baseURL: `${master.url}/v1`, apiKey: 'x', maxRetries: 0, timeout: 120_000 });
    await eventually(
      async () =>
        (await master.console<{ nodes: { healthy: boolean }[] }>('/router/v1/console/cluster/nodes')).nodes.every(
          (n) => n.healthy,
        ),
      { what: 'cluster healthy' },
    );
  }, REAL_ENGINES_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([master?.stop(), ...slaves.map((s) => s.stop())]);
    await new Promise((resolve) => relay?.server.close(resolve));
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
    const json = await openai.audio.transcriptions.create({
      model: 'ears',
      file: await toFile(wavFile(1), 'a.wav'),
      response_format: 'json',
    });
    expect(Object.keys(json)).toEqual(['text']);
    const verbose = await openai.audio.transcriptions.create({
      model: 'ears',
      file: await toFile(wavFile(1), 'a.wav'),
      response_format: 'verbose_json',
    });
    expect(verbose).toMatchObject({
      task: 'transcribe',
      language: expect.any(String),
      duration: expect.any(Number),
      text: expect.any(String),
    });
    expect(Array.isArray(verbose.segments)).toBe(true);
    for (const s of verbose.segments ?? [])
      expect(s).toMatchObject({
        id: expect.any(Number),
        start: expect.any(Number),
        end: expect.any(Number),
        text: expect.any(String),
      });
    const text = await openai.audio.transcriptions.create({
      model: 'ears',
      file: await toFile(wavFile(1), 'a.wav'),
      response_format: 'text',
    });
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

  it('runtime status is served with the cluster token only, and names each node’s loaded whisper configuration (STT-1)', async () => {
    for (const s of slaves) {
      const refused = await fetch(`${s.url}/router/v1/node/runtime-status`);
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { error: { type: string } }).error.type).toBe('authentication_error');
      const status = await statusOf(s);
      expect(status.models.find((m) => m.localId === 'ears')).toMatchObject({ loaded: true });
    }
  });

  it('a healthy node whose runtime status cannot be read with the cluster token takes no part in selection (STT-1)', async () => {
    relay.refuseStatus = true;
    try {
      const picked: string[] = [];
      for (let i = 0; i < 4; i++) picked.push(await autoOn());
      expect(picked).toEqual(['node-a', 'node-a', 'node-a', 'node-a']);
      const { nodes } = await master.console<{ nodes: { nodeId: string; healthy: boolean }[] }>(
        '/router/v1/console/cluster/nodes',
      );
      expect(nodes.find((n) => n.nodeId === 'node-b')?.healthy).toBe(true);
    } finally {
      relay.refuseStatus = false;
    }
    // Its status readable again, node-b takes its turn among the equally idle loaded nodes (STT-4).
    const picked = new Set<string>();
    for (let i = 0; i < 4; i++) picked.add(await autoOn());
    expect(picked).toEqual(new Set(['node-a', 'node-b']));
  });

  /** A long transcription at `node` (a slave's own API, explicit model; the master's, any model). */
  const long = (node: TestNode, model = 'ears') => {
    const form = new FormData();
    form.append('file', new Blob([wavFile(LONG_SECONDS)]), 'long.wav');
    form.append('model', model);
    return fetch(`${node.url}/v1/audio/transcriptions`, { method: 'POST', body: form }).then(async (r) => ({
      status: r.status,
      body: await r.text(),
      node: r.headers.get('x-routerdesk-node'),
    }));
  };

  it('every node busy: the next request goes to the node with the shortest whole-node queue (STT-3)', async () => {
    const [a, b] = slaves;
    const busy = [long(a), long(a), long(a), long(a), long(b)];
    try {
      // Both nodes busy, node-a with four requests at or waiting for its engine, node-b with one.
      await eventually(
        async () => {
          const [sa, sb] = await Promise.all([statusOf(a), statusOf(b)]);
          return sa.active + sa.queued === 4 && sb.active + sb.queued === 1;
        },
        { what: 'node-a with 4 requests, node-b with 1', timeoutMs: 60_000 },
      );
      // Twice in a row: a rotation that ignored the workload would send one of the two to node-a.
      expect(await autoOn()).toBe('node-b');
      expect(await autoOn()).toBe('node-b');
    } finally {
      for (const r of await Promise.all(busy)) expect(r.status, r.body).toBe(200);
    }
  });

  it('a request the master chose a node for counts once in that node’s workload, not again as a reservation (STT-2, STT-4)', async () => {
    const [a, b] = slaves;
    const busy = [long(a), long(a), long(a), long(a), long(a)];
    const chosen: ReturnType<typeof long>[] = [];
    try {
      await eventually(
        async () => {
          const sa = await statusOf(a);
          return sa.active + sa.queued === 5;
        },
        { what: 'node-a with 5 requests', timeoutMs: 60_000 },
      );
      // Three selector-less requests, all to the less busy node-b; they stay reserved on the master while they run.
      chosen.push(long(master, 'auto'), long(master, 'auto'), long(master, 'auto'));
      await eventually(
        async () => {
          const [sa, sb] = await Promise.all([statusOf(a), statusOf(b)]);
          return sa.active + sa.queued === 5 && sb.active + sb.queued === 3;
        },
        { what: 'node-a with 5 requests, node-b with the 3 chosen ones', timeoutMs: 60_000 },
      );
      // node-b has 3, node-a 5: counting node-b's reservations on top of its own count would make it 6.
      expect(await autoOn()).toBe('node-b');
    } finally {
      for (const r of await Promise.all(busy)) expect(r.status, r.body).toBe(200);
      for (const r of await Promise.all(chosen)) expect(r).toMatchObject({ status: 200, node: 'node-b' });
    }
  });
});

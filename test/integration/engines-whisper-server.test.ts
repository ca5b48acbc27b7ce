import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enginesAnswerSchema, type RuntimeHealth } from '../../src-router/contract';
import { encodeWav } from '../../src-router/engines/sim/wav';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';
import { REAL_ENGINES_TIMEOUT_MS, realWhisperServer } from '../support/real-engines';

// A node whose model says `backend: whisper-server` and names no command runs the engines cache's build (the node's
// PATH holds none), its boot self-test says which binary and version, GET /console/engines reports it, and the
// project's generated tiny model transcribes a WAV this test writes, in the OpenAI shape.

/** The node's PATH without folders that hold a whisper-server, so only the cache can provide one. */
function pathWithout(binary: string): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => {
      try {
        accessSync(join(dir, binary), constants.X_OK);
        return false;
      } catch {
        return true;
      }
    })
    .join(delimiter);
}

describe('whisper-server from the engines cache', () => {
  let node: TestNode;
  let whisperServer: string;

  beforeAll(async () => {
    const real = await realWhisperServer();
    whisperServer = real.whisperServer;
    node = await startNode({
      env: { PATH: pathWithout('whisper-server') },
      models: {
        ears: {
          name: 'tiny-whisper',
          backend: 'whisper-server',
          capabilities: ['transcription'],
          model: real.whisperModel,
        },
      },
    });
  }, REAL_ENGINES_TIMEOUT_MS);

  afterAll(async () => {
    await node?.stop();
  });

  it('names the cached binary and its version in the boot self-test', async () => {
    const health = await eventually(
      async () => {
        const res = await fetch(`${node.url}/router/v1/console/runtime.health`, {
          headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
        });
        const body = (await res.json()) as RuntimeHealth;
        return body.published ? body : undefined;
      },
      { what: 'the runtime blob' },
    );
    const line = health.blob!.selfTests!.find((t) => t.name === 'engine whisper-server binary');
    expect(line).toMatchObject({ status: 'pass' });
    expect(line!.detail).toContain(whisperServer);
    expect(line!.detail).toContain('from the engines cache');
    expect(line!.detail).toContain('whisper.cpp');
  });

  it('reports it in GET /router/v1/console/engines, beside what is missing and what is built in', async () => {
    const answer = enginesAnswerSchema.parse(await node.console('/router/v1/console/engines'));
    const byFamily = new Map(answer.engines.map((e) => [e.family, e]));
    expect(byFamily.get('whisper-server')).toMatchObject({
      available: true,
      path: whisperServer,
      found_in: 'cache',
      reason: null,
    });
    expect(byFamily.get('whisper-server')!.version).toBeTruthy();
    expect(byFamily.get('sim')).toMatchObject({ available: true, found_in: 'builtin' });
    expect(byFamily.get('llama-node')).toMatchObject({ available: true, found_in: 'builtin' });
    const sd = byFamily.get('sd-server')!;
    if (!sd.available) expect(sd.how_to_get).toContain('stable-diffusion.cpp');
    expect([...byFamily.keys()].sort()).toEqual([
      'koboldcpp',
      'llama-node',
      'llama-server',
      'sd-server',
      'sim',
      'vllm',
      'whisper-server',
    ]);
    // Behind the console token like every console read.
    expect((await fetch(`${node.url}/router/v1/console/engines`)).status).toBe(401);
    expect(
      (
        await fetch(`${node.url}/router/v1/console/engines`, {
          headers: { authorization: 'Bearer wrong-token-wrong-token' },
        })
      ).status,
    ).toBe(401);
  });

  it('transcribes a WAV through POST /v1/audio/transcriptions on the real engine, in the OpenAI shape', async () => {
    const openai = new OpenAI({ baseURL: `${node.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120_000 });
    const t = await openai.audio.transcriptions.create({
      model: 'tiny-whisper',
      file: await toFile(encodeWav(2), 'tone.wav', { type: 'audio/wav' }),
    });
    expect(typeof t.text).toBe('string');
    const lanes = await node.console<{ lanes: { lane: string; loaded: string | null; state: string }[] }>(
      '/router/v1/console/lanes',
    );
    expect(lanes.lanes.find((l) => l.lane === 'whisper')).toMatchObject({ state: 'ready' });
    expect(node.output()).not.toMatch(/whisper-server: not found/);
    const verbose = await fetch(`${node.url}/v1/audio/transcriptions`, {
      method: 'POST',
      body: (() => {
        const form = new FormData();
        form.append('model', 'tiny-whisper');
        form.append('response_format', 'verbose_json');
        form.append('file', new Blob([encodeWav(1)], { type: 'audio/wav' }), 'b.wav');
        return form;
      })(),
    });
    expect(verbose.status).toBe(200);
    const body = (await verbose.json()) as { text: unknown; segments?: unknown };
    expect(typeof body.text).toBe('string');
  }, 180_000);
});

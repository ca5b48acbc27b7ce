import { accessSync, constants, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RuntimeHealth } from '../../src-router/contract';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode, tempDir } from '../support/node-harness';

// A node whose model runs on llama-server when no llama-server is on PATH and none is built (an empty engines
// cache): the node starts, its boot self-test warns with the build command, and a request gets a clear error naming
// the engine, OpenAI-shaped on /v1 and Ollama-shaped on /api; the node keeps serving.

/** PATH without the folders that hold `binary`. */
function pathWithout(binary: string): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => {
      try {
        accessSync(join(d, binary), constants.X_OK);
        return false;
      } catch {
        return true;
      }
    })
    .join(delimiter);
}

describe('a llama-server model with no llama-server anywhere', () => {
  const dir = tempDir('routerdesk-nobinary-');
  let node: TestNode;

  beforeAll(async () => {
    const weights = join(dir, 'w.gguf');
    writeFileSync(weights, 'not a model: never read, the engine cannot start');
    node = await startNode({
      env: { PATH: pathWithout('llama-server'), XDG_CACHE_HOME: join(dir, 'empty-cache') },
      models: { t: { name: 'needs-llama', backend: 'llama-server', capabilities: ['text'], model: weights } },
    });
  });
  afterAll(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('warns in the boot self-test with the build command', async () => {
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
    const line = health.blob!.selfTests!.find((t) => t.name === 'engine llama-server binary');
    expect(line).toMatchObject({ status: 'warn' });
    expect(line!.detail).toContain('routerdesk engines build --only llama-server');
  });

  it('answers a chat request with a clear OpenAI error naming the engine, and an Ollama one on /api/chat', async () => {
    const openai = new OpenAI({ baseURL: `${node.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
    const err = (await openai.chat.completions
      .create({ model: 'needs-llama', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.message).toContain('llama-server');
    const res = await fetch(`${node.url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'needs-llama', stream: false, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = (await res.json()) as { error?: string };
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(body.error).toContain('llama-server');
    // Still serving.
    expect((await fetch(`${node.url}/v1/models`)).status).toBe(200);
  });
});

import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passesToEngine } from '../../src-router/backends/engine-env';
import { startNode, type TestNode } from '../support/node-harness';

interface Lane {
  lane: string;
  state: string;
  pid: number | null;
}

/** The environment a running process started with, from /proc/<pid>/environ. */
function environOf(pid: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

const OPERATOR_TOKEN = 'operator-secret-token-7f3a';
const CLUSTER_SECRET = 'cluster-secret-token-91c2';
const CONSOLE_SECRET = 'console-secret-token-5d0e';

describe.runIf(process.platform === 'linux')('issue #26 item 9: engines get an allow-listed environment', () => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startNode({
      models: {
        chat: {
          name: 'chat',
          backend: 'sim',
          capabilities: ['text'],
          sim: { load_time: '20ms', token_time: '1ms' },
          env: { SIM_MARK: 'from-model-config', ROUTERDESK_MODEL_SET: 'named-on-purpose' },
        },
      },
      env: {
        INFERENCE_ADMIN_EMAILS: `ops@example.com=${OPERATOR_TOKEN}`,
        INFERENCE_DEPLOY_ENABLED: 'true',
        ROUTERDESK_CONSOLE_TOKEN: CONSOLE_SECRET,
        ROUTERDESK_CLUSTER_TOKEN: CLUSTER_SECRET,
        ROUTERDESK_CLOCK_OFFSET_MS: '0',
        CLOUD_API_SECRET: 'some-other-credential',
        OPENBLAS_CORETYPE: 'Haswell',
        GGML_SCHED_MAX_COPIES: '2',
        LC_ALL: 'C',
        TZ: 'UTC',
      },
    });
  }, 30_000);
  afterAll(async () => {
    await node?.stop();
  });

  it('a sim engine spawned by a node with tokens in its environment has none of them, and has what it needs', async () => {
    const client = new OpenAI({ baseURL: `${node.url}/v1`, apiKey: 'x', maxRetries: 0 });
    await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    const { lanes } = await node.console<{ lanes: Lane[] }>('/router/v1/console/lanes');
    const pid = lanes.find((l) => l.lane === 'text')?.pid;
    expect(pid).toBeTypeOf('number');
    const env = environOf(pid!);
    const text = readFileSync(`/proc/${pid}/environ`, 'utf8');

    for (const secret of [OPERATOR_TOKEN, CLUSTER_SECRET, CONSOLE_SECRET, 'some-other-credential'])
      expect(text).not.toContain(secret);
    for (const name of [
      'INFERENCE_ADMIN_EMAILS',
      'INFERENCE_DEPLOY_ENABLED',
      'ROUTERDESK_CONSOLE_TOKEN',
      'ROUTERDESK_CLUSTER_TOKEN',
      'ROUTERDESK_CLOCK_OFFSET_MS',
      'ROUTERDESK_LOG_LEVEL',
      'CLOUD_API_SECRET',
    ]) {
      expect(env, name).not.toHaveProperty(name);
    }
    // What it takes from the node: only allow-listed names; and what the model's config sets, on purpose.
    expect(env.PATH).toBe(process.env.PATH);
    expect(env.OPENBLAS_CORETYPE).toBe('Haswell');
    expect(env.GGML_SCHED_MAX_COPIES).toBe('2');
    expect(env.LC_ALL).toBe('C');
    expect(env.SIM_MARK).toBe('from-model-config');
    expect(env.ROUTERDESK_MODEL_SET).toBe('named-on-purpose');
    const fromNode = Object.keys(env).filter((n) => n !== 'SIM_MARK' && n !== 'ROUTERDESK_MODEL_SET');
    expect(fromNode.filter((n) => !passesToEngine(n))).toEqual([]);
  });
});

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { ClusterNodeView } from '../../src-router/contract';
import {
  CLUSTER_TOKEN as LENDING_TOKEN,
  type LendingCluster,
  simText,
  startLendingCluster,
} from '../support/lending-cluster';
import { eventually, runCli, startNode, TEST_CONSOLE_TOKEN, type TestNode, tempDir } from '../support/node-harness';

// Console and cluster tokens on a real node: a token shorter than 16 characters stops start-up naming its key, and
// repeated wrong tokens from one address are answered 429 with Retry-After, on the console and the node API alike;
// the right token is never refused, so a slave behind the attacker's address stays in its cluster.

const CLUSTER_TOKEN = 'throttle-cluster-token-0123456789';

describe('issue #26 item 11: console tokens and failed token checks', () => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startNode({ models: {}, config: { cluster: { role: 'master', token: CLUSTER_TOKEN } } });
  });
  afterAll(async () => {
    await node?.stop();
  });

  it('issue #26 item 11: a console or operator token shorter than 16 characters stops start-up, naming the config key', async () => {
    for (const [console, key] of [
      [{ token: 'short-token' }, 'console.token'],
      [{ operators: ['op-token-15char'] }, 'console.operators.0'],
    ] as const) {
      const dir = tempDir();
      const file = join(dir, 'node.yaml');
      writeFileSync(
        file,
        stringify({ server: { host: '127.0.0.1', port: 0 }, cluster: { store_dir: join(dir, 'store') }, console }),
      );
      const { code, stdout, stderr } = await runCli(['node', '--config', file]);
      expect(code, stdout + stderr).not.toBe(0);
      expect(stderr).toContain(`${key}: `);
      expect(stderr).toMatch(/at least 16 characters/);
    }
  });

  it('after 10 wrong tokens from one address, console and node API answer wrong ones 429 with Retry-After; the right token passes at once', async () => {
    const get = (path: string, token: string) =>
      fetch(`${node.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    expect((await get('/router/v1/console/models', TEST_CONSOLE_TOKEN)).status).toBe(200);
    for (let i = 0; i < 5; i++)
      expect((await get('/router/v1/console/models', `wrong-console-${i}-0123456789`)).status).toBe(401);
    for (let i = 0; i < 5; i++)
      expect((await get('/router/v1/node/snapshot', `wrong-cluster-${i}-0123456789`)).status).toBe(401);
    for (const [path, token] of [
      ['/router/v1/console/models', 'wrong-console-x-0123456789'],
      ['/router/v1/node/snapshot', 'wrong-cluster-x-0123456789'],
    ]) {
      const res = await get(path, token);
      expect(res.status, `${path} ${token}`).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('too_many_failed_tokens');
    }
    expect((await get('/router/v1/console/models', TEST_CONSOLE_TOKEN)).status).toBe(200);
    expect((await get('/router/v1/node/snapshot', CLUSTER_TOKEN)).status).toBe(200);
    // What needs no token is not affected.
    expect((await fetch(`${node.url}/health`)).status).toBe(200);
  });
});

// Client API keys are a token check like the others: repeated different wrong keys from one address are slowed the
// same way, answered in the API's own shape (OpenAI on /v1, Ollama on /api).
const API_KEY = 'throttle-client-key-0123456789';

describe('issue #26 item 11: wrong client API keys are throttled per address', () => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startNode({ models: {}, config: { server: { api_keys: [API_KEY] } } });
  });
  afterAll(async () => {
    await node?.stop();
  });

  it('after 10 different wrong API keys, /v1 and /api answer wrong keys 429 with Retry-After, the right key 200; the same wrong key again is no new guess', async () => {
    const get = (path: string, key: string) =>
      fetch(`${node.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    expect((await get('/v1/models', API_KEY)).status).toBe(200);
    // A client with one stale key keeps getting 401 and blocks no one.
    for (let i = 0; i < 12; i++) expect((await get('/v1/models', 'stale-client-key-0123456789')).status).toBe(401);
    expect((await get('/v1/models', API_KEY)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await get('/v1/models', `wrong-key-${i}-0123456789`)).status).toBe(401);
    for (let i = 5; i < 9; i++) expect((await get('/api/tags', `wrong-key-${i}-0123456789`)).status).toBe(401);
    expect((await get('/v1/models', API_KEY)).status).toBe(200);
    expect((await get('/api/tags', API_KEY)).status).toBe(200);
    const openai = await get('/v1/models', 'wrong-key-9-0123456789');
    expect(openai.status).toBe(429);
    expect(Number(openai.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await openai.json()) as { error: { code: string; type: string } }).error).toMatchObject({
      code: 'too_many_failed_tokens',
      type: 'rate_limit_error',
    });
    const ollama = await get('/api/tags', 'wrong-key-10-0123456789');
    expect(ollama.status).toBe(429);
    expect(typeof ((await ollama.json()) as { error: unknown }).error).toBe('string');
    // The console shares the count: a guesser does not move on to another token of the same node.
    expect((await get('/router/v1/console/models', 'wrong-console-0123456789')).status).toBe(429);
    expect((await get('/router/v1/console/models', TEST_CONSOLE_TOKEN)).status).toBe(200);
    expect((await fetch(`${node.url}/health`)).status).toBe(200);
  });
});

// A one-time console code is exchanged for the console token: a wrong code is a failed token check like any other.
describe('issue #26 items 7 and 11: wrong one-time console codes are throttled per address', () => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startNode({ models: {} });
  });
  afterAll(async () => {
    await node?.stop();
  });

  it('after 10 different wrong codes, the exchange answers wrong codes 429 with Retry-After; a good code and the console token still pass', async () => {
    const exchange = (code: string) =>
      fetch(`${node.url}/router/v1/console/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code }),
      });
    const issue = async () =>
      (
        (await (
          await fetch(`${node.url}/router/v1/console/codes`, {
            method: 'POST',
            headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
          })
        ).json()) as { code: string }
      ).code;
    const spent = await issue();
    expect((await exchange(spent)).status).toBe(200);
    // A spent code sent again is a replay, not a guess: 401 console_code_used, and it blocks no one.
    for (let i = 0; i < 12; i++) expect((await exchange(spent)).status).toBe(401);
    const good = await issue();
    for (let i = 0; i < 10; i++) expect((await exchange(`guessed-code-${i}`)).status).toBe(401);
    const refused = await exchange('guessed-code-10');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('too_many_failed_tokens');
    const taken = await exchange(good);
    expect(taken.status).toBe(200);
    expect(((await taken.json()) as { token: string }).token).toBe(TEST_CONSOLE_TOKEN);
    expect(
      (
        await fetch(`${node.url}/router/v1/console/models`, {
          headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
        })
      ).status,
    ).toBe(200);
  });
});

// An attacker behind the same address as a slave (here: every node and the test on 127.0.0.1) sends wrong tokens to
// the master and the slave: the right token from that address still works at once, and the cluster stays whole.
describe('wrong tokens never lock the right one out of a cluster', () => {
  let cluster: LendingCluster;

  beforeAll(async () => {
    cluster = await startLendingCluster({ slaves: { s1: { a: simText('model-a', '5ms') } } });
    await eventually(async () => (await cluster.chat('master', 'model-a')).status === 200, {
      timeoutMs: 20_000,
      what: 'the master serving the slave model',
    });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('after 30 wrong tokens at master and slave, the right tokens pass from the same address and the slave stays registered and healthy', async () => {
    const get = (url: string, path: string, token: string) =>
      fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const marks = { master: cluster.master.output().length, s1: cluster.slaves.s1.output().length };
    for (const url of [cluster.master.url, cluster.urls.s1]) {
      const answers: number[] = [];
      for (let i = 0; i < 15; i++) {
        answers.push((await get(url, '/router/v1/node/snapshot', `wrong-cluster-${i}-0123456789`)).status);
        answers.push((await get(url, '/router/v1/console/models', `wrong-console-${i}-0123456789`)).status);
      }
      expect(answers.slice(0, 10)).toEqual(Array(10).fill(401));
      expect(answers.slice(10)).toEqual(Array(20).fill(429));
      expect((await get(url, '/router/v1/node/snapshot', LENDING_TOKEN)).status).toBe(200);
      expect((await get(url, '/router/v1/console/models', TEST_CONSOLE_TOKEN)).status).toBe(200);
    }
    // A slave's registration from the attacker's address is taken at once.
    const snapshot = await cluster.node(cluster.urls.s1, '/router/v1/node/snapshot');
    const registered = await fetch(`${cluster.master.url}/router/v1/node/register`, {
      method: 'POST',
      headers: { authorization: `Bearer ${LENDING_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(snapshot),
    });
    expect(registered.status).toBe(200);
    // The master polls the slave from that address with the cluster token: a poll after the wrong tokens succeeds.
    const after = Date.now();
    await eventually(
      async () => {
        const { nodes } = await cluster.console<{ nodes: ClusterNodeView[] }>('/router/v1/console/cluster/nodes');
        const s1 = nodes.find((n) => n.nodeId === 's1');
        return s1?.healthy && s1.lastSeen !== null && Date.parse(s1.lastSeen) >= after;
      },
      { timeoutMs: 20_000, what: 'a poll of the slave after the wrong tokens' },
    );
    expect((await cluster.chat('master', 'model-a')).status).toBe(200);
    expect(cluster.slaves.s1.output().slice(marks.s1)).not.toContain('registration with master failed');
    expect(cluster.master.output().slice(marks.master)).not.toContain('node unhealthy');
  });
});

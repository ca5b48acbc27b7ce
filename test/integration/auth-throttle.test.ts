import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startNode, tempDir, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';

// Console and cluster tokens on a real node: a token shorter than 16 characters stops start-up naming its key, and
// repeated wrong tokens from one address are answered 429 with Retry-After, on the console and the node API alike.

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
    for (const [console, key] of [[{ token: 'short-token' }, 'console.token'], [{ operators: ['op-token-15char'] }, 'console.operators.0']] as const) {
      const dir = tempDir();
      const file = join(dir, 'node.yaml');
      writeFileSync(file, stringify({ server: { host: '127.0.0.1', port: 0 }, cluster: { store_dir: join(dir, 'store') }, console }));
      const { code, stdout, stderr } = await runCli(['node', '--config', file]);
      expect(code, stdout + stderr).not.toBe(0);
      expect(stderr).toContain(`${key}: `);
      expect(stderr).toMatch(/at least 16 characters/);
    }
  });

  it('issue #26 item 11: after 10 wrong tokens from one address, console and node API answer 429 with Retry-After, even to the right token', async () => {
    const get = (path: string, token: string) => fetch(`${node.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    expect((await get('/router/v1/console/models', TEST_CONSOLE_TOKEN)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await get('/router/v1/console/models', `wrong-console-${i}-0123456789`)).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await get('/router/v1/node/snapshot', `wrong-cluster-${i}-0123456789`)).status).toBe(401);
    for (const [path, token] of [['/router/v1/console/models', 'wrong-console-x-0123456789'], ['/router/v1/console/models', TEST_CONSOLE_TOKEN], ['/router/v1/node/snapshot', CLUSTER_TOKEN]]) {
      const res = await get(path, token);
      expect(res.status, `${path} ${token}`).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('too_many_failed_tokens');
    }
    // What needs no token is not affected.
    expect((await fetch(`${node.url}/health`)).status).toBe(200);
  });
});

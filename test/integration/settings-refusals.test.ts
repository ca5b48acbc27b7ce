import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli, startNode, TEST_CONSOLE_TOKEN, type TestNode, tempDir } from '../support/node-harness';

// Issue #37 items 2 and 9 on real processes. Item 2: with models.shared_dir set to the config's folder, a Settings
// save wrote node.yaml.bak there, listed in the asset inventory and downloadable by hash with the cluster token — every
// token inside. A shared folder that holds the node config is refused at its field, in Settings and at start-up. Item 9:
// 0 ms and 1 ms intervals were taken and the node then spun a core; they are refused at the field too.

const CLUSTER_TOKEN = 'refusals-cluster-token-0123456789';

describe('Settings and start-up refuse a shared folder holding the config, and intervals without a floor', () => {
  let node: TestNode;
  let file: string;

  beforeAll(async () => {
    node = await startNode({ models: {}, config: { cluster: { token: CLUSTER_TOKEN } } });
    file = join(node.dir, 'node.yaml');
  });
  afterAll(async () => {
    await node?.stop();
  });

  const settings = (init: { method?: string; body?: unknown } = {}) =>
    fetch(`${node.url}/router/v1/console/settings`, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${TEST_CONSOLE_TOKEN}`,
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const current = async () =>
    ((await (await settings()).json()) as { config: Record<string, Record<string, unknown>> }).config;
  const put = async (config: Record<string, unknown>) => {
    const res = await settings({ method: 'PUT', body: { config } });
    return { status: res.status, body: (await res.json()) as { error?: { param: string; message: string } } };
  };

  it('item 2: a shared folder that holds the node config is a 400 at models.shared_dir; nothing is written', async () => {
    const before = readFileSync(file, 'utf8');
    const config = await current();
    // The config's own folder, written as the operator would (relative to the config file), and absolute.
    for (const shared of ['.', node.dir, './', '..']) {
      const answer = await put({ ...config, models: { ...config.models, shared_dir: shared } });
      expect(answer.status, shared).toBe(400);
      expect(answer.body.error?.param, shared).toBe('config.models.shared_dir');
      expect(answer.body.error?.message, shared).toMatch(/holds the node config file .*node\.yaml.*choose a folder/);
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(existsSync(`${file}.bak`)).toBe(false);
  });

  it('item 9: 0 ms, 1 ms and 99 ms intervals are a 400 at their field; nothing is written', async () => {
    const config = await current();
    const before = readFileSync(file, 'utf8');
    for (const [section, key, value] of [
      ['cluster', 'scheduling_refresh_interval', '1ms'],
      ['cluster', 'health_interval', 0],
      ['cluster', 'sync_interval', '0ms'],
      ['routing', 'poll_interval', '1ms'],
      ['routing', 'scrape_interval', 99],
      ['backend', 'health_interval', '1ms'],
      ['server', 'write_timeout', '1ms'],
      ['cluster', 'offload_lent_stall_timeout', '1ms'],
    ] as const) {
      const answer = await put({ ...config, [section]: { ...config[section], [key]: value } });
      expect(answer.status, `${section}.${key}`).toBe(400);
      expect(answer.body.error?.param).toBe(`config.${section}.${key}`);
      expect(answer.body.error?.message).toMatch(new RegExp(`^config\\.${section}\\.${key}: too short: .*\\(at least`));
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});

describe('start-up refuses the same, naming the file and the field', () => {
  const dir = tempDir();

  it('item 2: a node whose models.shared_dir holds its config does not start', async () => {
    const configFile = join(dir, 'node.yaml');
    writeFileSync(
      configFile,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        cluster: { role: 'standalone', node_id: 'n', token: CLUSTER_TOKEN, store_dir: join(dir, 'store') },
        models: { shared_dir: '.' },
        console: { token: TEST_CONSOLE_TOKEN },
      }),
    );
    const run = await runCli(['node', '--config', configFile]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(configFile);
    expect(run.stderr).toContain(`models.shared_dir: the folder ${dir} holds the node config file ${configFile}`);
    expect(run.stdout).not.toMatch(/listening on/);
  });

  it('item 9: a node whose interval is 1 ms does not start', async () => {
    const configFile = join(dir, 'fast.yaml');
    writeFileSync(
      configFile,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        cluster: { node_id: 'n', store_dir: join(dir, 'store-fast'), scheduling_refresh_interval: '1ms' },
        routing: { scrape_interval: 0 },
      }),
    );
    const run = await runCli(['node', '--config', configFile]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/cluster\.scheduling_refresh_interval: too short: "1ms" \(at least 100ms\)/);
    expect(run.stderr).toMatch(/routing\.scrape_interval: too short: 0 \(at least 100ms\)/);
  });
});

// The leak itself, as reported: on a node that starts with its config's folder as the shared folder (main before the
// fix), a Settings save puts node.yaml.bak in the asset inventory. Kept to show what the refusal prevents: with the fix
// such a node no longer starts, so the backup can never be listed.
describe('item 2: the backup a Settings save writes is never an asset', () => {
  let node: TestNode | undefined;
  afterAll(async () => {
    await node?.stop();
  });

  it('a node configured with its own folder as the shared folder does not start; had it started, nothing leaks', async () => {
    const dir = tempDir();
    const start = startNode({
      dir,
      models: {},
      config: { cluster: { token: CLUSTER_TOKEN }, models: { shared_dir: dir } },
    });
    const started = await start.then(
      (n) => n,
      (err: Error) => err,
    );
    if (started instanceof Error) {
      expect(started.message).toMatch(/models\.shared_dir: the folder .* holds the node config file/);
      return;
    }
    node = started;
    const config = (
      (await (
        await fetch(`${node.url}/router/v1/console/settings`, {
          headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` },
        })
      ).json()) as { config: Record<string, Record<string, unknown>> }
    ).config;
    await fetch(`${node.url}/router/v1/console/settings`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ config: { ...config, cluster: { ...config.cluster, sync_interval: '11s' } } }),
    });
    const backup = join(dir, 'node.yaml.bak');
    const hash = existsSync(backup) ? createHash('sha256').update(readFileSync(backup)).digest('hex') : 'none';
    const byHash = await fetch(`${node.url}/router/v1/node/assets/by-hash/${hash}`, {
      headers: { authorization: `Bearer ${CLUSTER_TOKEN}` },
    }).catch(() => null);
    const leaked = byHash?.status === 200 ? await byHash.text() : '';
    expect(leaked).not.toContain(TEST_CONSOLE_TOKEN);
    expect.unreachable('a node whose shared folder holds its config started');
  });
});

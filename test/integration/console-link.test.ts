import { spawn } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthAnswerSchema } from '../../src-router/contract';
import {
  CLI,
  eventually,
  runCli,
  startNode,
  TEST_CONSOLE_TOKEN,
  type TestNode,
  tempDir,
} from '../support/node-harness';

// Issue #40 item 1: one documented way back into a running node's console from any shell, without its terminal:
// `routerdesk console-link --config FILE` (or `--dir D` for serve's folder) prints a fresh one-time link, through the
// node's owner-only access record; it follows the node across a Settings restart that changed its token.

const exchange = async (url: string, code: string) => {
  const res = await fetch(`${url}/router/v1/console/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  return { status: res.status, body: (await res.json()) as { token?: string } };
};
const linkOf = (stdout: string) => new URL(stdout.split('\n')[0]);

describe('routerdesk console-link', () => {
  let node: TestNode;
  let configFile: string;
  let dir: string;

  beforeAll(async () => {
    // No console token in the config: a random one per start, as serve runs.
    // Its own folder, kept when the node stops (the last test asks for a link of a stopped node).
    dir = tempDir();
    node = await startNode({ dir, models: {}, config: { console: { token: '' } } });
    configFile = join(node.dir, 'node.yaml');
  });
  afterAll(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints a one-time link (10 minutes) to the running node, and writes it into an owner-only page', async () => {
    const run = await runCli(['console-link', '--config', configFile]);
    expect(run.code, run.stderr).toBe(0);
    const link = linkOf(run.stdout);
    expect(link.origin).toBe(node.url);
    expect(run.stdout).toMatch(/once, within 10 minutes/);
    const page = /open the page (\S+)/.exec(run.stdout)![1];
    expect(page).toBe(join(node.dir, 'store', 'console', 'open-console.html'));
    expect([statSync(page).mode & 0o777, statSync(join(node.dir, 'store', 'console')).mode & 0o777]).toEqual([
      0o600, 0o700,
    ]);
    const first = await exchange(node.url, link.searchParams.get('code')!);
    expect(first.status).toBe(200);
    const token = first.body.token!;
    expect(token.length).toBeGreaterThanOrEqual(16);
    expect((await exchange(node.url, link.searchParams.get('code')!)).status).toBe(401);
    // A second run gives a new link.
    const again = linkOf((await runCli(['console-link', '--config', configFile])).stdout);
    expect(again.searchParams.get('code')).not.toBe(link.searchParams.get('code'));
    expect(await exchange(node.url, again.searchParams.get('code')!)).toEqual({ status: 200, body: { token } });
  });

  it('another local user cannot: the access record is closed to it', async () => {
    if (process.getuid?.() !== 0) return;
    const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(
        'setpriv',
        [
          '--reuid=65534',
          '--regid=65534',
          '--clear-groups',
          process.execPath,
          CLI,
          'console-link',
          '--config',
          configFile,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('exit', (code) => resolve({ code, out }));
    });
    expect(run.code).not.toBe(0);
    expect(run.out).not.toMatch(/code=/);
  });

  it('follows the node across a Settings restart that changed the console token: the new link gives the new token', async () => {
    const code = linkOf((await runCli(['console-link', '--config', configFile])).stdout).searchParams.get('code')!;
    const old = (await exchange(node.url, code)).body.token!;
    const auth = { authorization: `Bearer ${old}` };
    const { config } = (await (await fetch(`${node.url}/router/v1/console/settings`, { headers: auth })).json()) as {
      config: { console: Record<string, unknown> };
    };
    const started = healthAnswerSchema.parse(await (await fetch(`${node.url}/health`)).json()).started_at;
    const put = await fetch(`${node.url}/router/v1/console/settings`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ config: { ...config, console: { ...config.console, token: TEST_CONSOLE_TOKEN } } }),
    });
    expect(put.status, await put.clone().text()).toBe(200);
    await eventually(
      async () => {
        const health = await fetch(`${node.url}/health`).then(
          async (r) => healthAnswerSchema.parse(await r.json()),
          () => null,
        );
        return health !== null && health.started_at !== started;
      },
      { what: 'the node restarted', timeoutMs: 30_000 },
    );
    const link = await eventually(
      async () => {
        const run = await runCli(['console-link', '--config', configFile]);
        if (run.code !== 0) return undefined;
        const l = linkOf(run.stdout);
        const answer = await exchange(l.origin, l.searchParams.get('code')!);
        return answer.status === 200 ? answer : undefined;
      },
      { what: 'a link of the restarted node', timeoutMs: 30_000 },
    );
    expect(link.body.token).toBe(TEST_CONSOLE_TOKEN);
  });

  it('says plainly when no node runs on that config, and how to start it', async () => {
    await node.stop();
    const run = await runCli(['console-link', '--config', configFile]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `routerdesk: no node is running on ${configFile} (nothing in ${join(node.dir, 'store', 'console')}): start it with routerdesk node --config ${configFile}\n`,
    );
  });
});

import { existsSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startNode, type TestNode, tempDir } from '../support/node-harness';

// Issue #9 on real processes: a store folder serves one node at a time (`<store_dir>/router.lock` with its PID).
// A second `node` or `serve` on it refuses to start, naming the folder and the PID; a node killed outright leaves
// a stale lock that the next node on the same folder takes over; a clean stop removes the lock.
describe('one node per store (issue #9)', () => {
  const dir = tempDir();
  const models = {
    chatty: {
      name: 'chatty',
      backend: 'sim' as const,
      capabilities: ['text' as const],
      sim: { load_time: '50ms', token_time: '1ms' },
    },
  };
  let node: TestNode | undefined;
  const lockPid = () => Number(readFileSync(join(dir, 'store', 'router.lock'), 'utf8').split('\n')[0]);
  afterAll(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a second node on the same store refuses to start with the store folder and the PID holding it', async () => {
    node = await startNode({ dir, models });
    expect(lockPid()).toBe(node.proc.pid);
    const second = await runCli(['node', '--config', join(dir, 'node.yaml')]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `store ${realpathSync(join(dir, 'store'))} is in use by another routerdesk process (PID ${node.proc.pid}, lock file ${realpathSync(join(dir, 'store'))}/router.lock)`,
    );
    expect(lockPid()).toBe(node.proc.pid); // the refused process did not touch it
    expect((await fetch(`${node.url}/health`)).ok).toBe(true);
  });

  it('`serve` on a store a node already uses refuses to start, with a clear message', async () => {
    const r = await runCli(['serve', '--dir', dir, '--no-open', '--port', '0'], { timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^routerdesk serve: store ${realpathSync(join(dir, 'store'))} is in use by another routerdesk process \\(PID ${node!.proc.pid}, `,
      ),
    );
    expect(r.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
  });

  it('a node killed outright leaves a stale lock; the next node on the same store takes it over; a clean stop removes it', async () => {
    const killed = node!;
    const exited = new Promise((r) => killed.proc.once('exit', r));
    killed.proc.kill('SIGKILL');
    await exited;
    expect(lockPid()).toBe(killed.proc.pid); // left behind
    node = await startNode({ dir, models });
    expect(lockPid()).toBe(node.proc.pid);
    expect((await fetch(`${node.url}/health`)).ok).toBe(true);
    const stopping = node;
    node = undefined;
    await stopping.stop();
    expect(existsSync(join(dir, 'store', 'router.lock'))).toBe(false);
  });
});

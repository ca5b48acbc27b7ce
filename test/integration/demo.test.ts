import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decisionPageSchema, lendingViewSchema } from '../../src-router/contract';
import { CLI, eventually, pidAlive, tempDir } from '../support/node-harness';
import { fakeBrowser, linkPageOf } from '../support/serve-with-browser';

// Issue #15: `routerdesk demo` starts a master and two slaves (separate processes) with linked models and bursty
// traffic: within 30 s of printing its UI URL the master's Lending view has a live lease and the gathered decision
// log a lent request. SIGINT stops every process it started: the three nodes and their engines.

const DEMO_NODES = ['master', 'gpu-a', 'gpu-b'];

describe('routerdesk demo', () => {
  const dir = tempDir('routerdesk-demo-test-');
  let demo: ChildProcess | undefined;
  let out = '';
  const pids = new Set<number>();

  afterAll(() => {
    if (demo && demo.exitCode === null && demo.signalCode === null) demo.kill('SIGKILL');
    for (const pid of pids) if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows a live lease and a lent request within 30 s; the browser gets a one-time code, not the token (item 7); SIGINT leaves no process behind', async () => {
    const browser = fakeBrowser(dir);
    demo = spawn(process.execPath, [CLI, 'demo', '--dir', dir, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ROUTERDESK_LOG_LEVEL: 'warn', ...browser.env },
    });
    demo.stdout!.on('data', (d) => (out += d));
    demo.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => demo!.once('exit', (code) => r(code)));

    const ui = await eventually(() => /UI:\s+(http:\/\/\S+)\/\?token=(\S+)/.exec(out), {
      timeoutMs: 60_000,
      what: `the demo's UI URL:\n${out}`,
    });
    const [base, token] = [ui[1], decodeURIComponent(ui[2])];
    for (const m of out.matchAll(/node (\S+)\s+pid (\d+)/g)) pids.add(Number(m[2]));
    expect(pids.size).toBe(3);
    const consoleGet = async (path: string) => {
      const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
      if (!res.ok) throw new Error(`${path}: ${res.status}`);
      return res.json();
    };
    const shownAt = Date.now();
    // Item 7 and issue #37 item 1: the browser's command line (seen by every local user in `ps`) names an owner-only
    // page holding a one-time code; neither the token nor the code is on it.
    const opened = await eventually(() => browser.argv()[0], { timeoutMs: 10_000, what: 'the browser started' });
    expect(opened).not.toContain(token);
    const { code, origin } = linkPageOf(opened);
    expect(origin).toBe(base);
    expect(opened).not.toContain(code);
    expect(code).toMatch(/^[\w-]{20,}$/);
    const session = await fetch(`${base}/router/v1/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    });
    expect(await session.json()).toEqual({ token });

    const lease = await eventually(
      async () => lendingViewSchema.parse(await consoleGet('/router/v1/console/lending')).leases[0],
      { timeoutMs: 30_000, everyMs: 100, what: 'a live lease in the Lending view' },
    );
    expect(lease.owner.nodeId).toBe('gpu-a');
    expect(lease.helper.nodeId).toBe('gpu-b');
    const lent = await eventually(
      async () =>
        decisionPageSchema.parse(await consoleGet('/router/v1/console/decisions?event=lent&limit=10')).rows[0],
      {
        timeoutMs: Math.max(1_000, 30_000 - (Date.now() - shownAt)),
        everyMs: 200,
        what: 'a lent request in the decision log',
      },
    );
    expect(lent).toMatchObject({ kind: 'dispatch', event: 'lent', nodeId: 'gpu-a', helperNode: 'gpu-b' });

    // The engines the nodes run now (each node records them in its store), then Ctrl-C.
    for (const id of DEMO_NODES) {
      const file = join(dir, id, 'store', 'engines.json');
      if (!existsSync(file)) continue;
      for (const e of (JSON.parse(readFileSync(file, 'utf8')) as { engines: { pid: number }[] }).engines)
        pids.add(e.pid);
    }
    expect(pids.size).toBeGreaterThan(3);
    demo.kill('SIGINT');
    const timer = setTimeout(() => demo!.kill('SIGKILL'), 30_000);
    expect(await exited).toBe(0);
    clearTimeout(timer);
    await eventually(() => [...pids].every((p) => !pidAlive(p)), {
      timeoutMs: 10_000,
      what: `every process of the demo gone: ${[...pids].filter(pidAlive).join(', ')}`,
    });
  }, 150_000);
});

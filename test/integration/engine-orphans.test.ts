import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import type { ModelConfigInput } from '../../src-router/config';
import { CLI, eventually, startNode, type TestNode, tempDir } from '../support/node-harness';

interface Lane {
  lane: string;
  loaded: string | null;
  state: string;
  pid: number | null;
}

/** /proc/<pid>/stat fields after the command name: state, ppid, pgrp, …, starttime (22). */
function stat(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text
      .slice(text.lastIndexOf(')') + 2)
      .trim()
      .split(/\s+/);
  } catch {
    return null;
  }
}

/** The live (not zombie: orphans here go to an init that may not reap them) processes in group `pgid`. */
function groupMembers(pgid: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const f = stat(Number(name));
    if (f && Number(f[2]) === pgid && f[0] !== 'Z' && f[0] !== 'X') pids.push(Number(name));
  }
  return pids;
}

const running = (pid: number) => {
  const f = stat(pid);
  return f !== null && f[0] !== 'Z' && f[0] !== 'X';
};

/**
 * An external engine (backend llama-server with a `command`) that we own: a shell that starts the sim engine in
 * the background and waits for it. No --exit-with-stdin, so like llama-server it outlives a node killed outright,
 * and it is two processes, so only stopping its whole process group stops it.
 */
const external: ModelConfigInput = {
  name: 'outside',
  backend: 'llama-server',
  capabilities: ['text'],
  command: `sh -c '"$0" "$1" sim-engine --host "$2" --port "$3" --alias "$4" --load-time 20ms --token-time 1ms & wait' "${process.execPath}" "${CLI}" \${HOST} \${PORT} \${ALIAS}`,
};

// Issue #9, "Engines and state": external engines run in their own process group; a node stops the group; the next
// start of a node on the same store stops what a node killed with SIGKILL left behind (PIDs recorded in the store).
describe.runIf(process.platform === 'linux')('external engines are never orphaned (issue #9)', () => {
  const dir = tempDir();
  const others: ChildProcess[] = [];
  let node: TestNode | undefined;
  const start = async () => (node = await startNode({ dir, models: { outside: external } }));
  const lane = async (n: TestNode) =>
    (await n.console<{ lanes: Lane[] }>('/router/v1/console/lanes')).lanes.find((l) => l.lane === 'text')!;
  const chat = (n: TestNode) =>
    new OpenAI({ baseURL: `${n.url}/v1`, apiKey: 'x', maxRetries: 0 }).chat.completions.create({
      model: 'outside',
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 2,
    });
  /** Starts the engine with a request; its PID, which is also its process group. */
  const engineGroup = async (n: TestNode) => {
    await chat(n);
    const { pid } = await lane(n);
    expect(pid).not.toBeNull();
    // Its own group, led by the engine process, holding the shell and the sim engine it started.
    expect(Number(stat(pid!)![2])).toBe(pid);
    await eventually(() => groupMembers(pid!).length === 2, { what: 'the shell and its sim engine in the group' });
    return pid!;
  };
  const leftovers: number[] = [];

  afterAll(async () => {
    await node?.stop();
    for (const pgid of leftovers) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        /* stopped, as expected */
      }
    }
    for (const c of others) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('an engine left running by a node killed with SIGKILL is stopped (whole group) by the next node on the same store', async () => {
    const first = await start();
    const pgid = await engineGroup(first);
    leftovers.push(pgid);
    const recordFile = join(dir, 'store', 'engines.json');
    expect(JSON.parse(readFileSync(recordFile, 'utf8')).engines).toMatchObject([
      { pid: pgid, pgid, localId: expect.any(String) },
    ]);

    const exited = new Promise((r) => first.proc.once('exit', r));
    first.proc.kill('SIGKILL');
    await exited;
    // The node could not stop anything: the engine is an orphan now (what the next start is for).
    const orphans = groupMembers(pgid);
    expect(orphans).toHaveLength(2);
    expect(orphans.every(running)).toBe(true);

    const second = await start();
    await eventually(() => groupMembers(pgid).length === 0, { what: 'the leftover group stopped by the next node' });
    expect(second.output()).toMatch(new RegExp(`stopping engine pid ${pgid} .*left running by a previous run`));
    // The new node serves with an engine of its own.
    const fresh = await engineGroup(second);
    expect(fresh).not.toBe(pgid);
    leftovers.push(fresh);
  });

  it('a node stopped with SIGTERM stops its external engine’s whole group and leaves no record', async () => {
    const n = node!;
    const pgid = (await lane(n)).pid!;
    expect(groupMembers(pgid)).toHaveLength(2);
    await n.stop();
    node = undefined;
    // The node stops the group before it exits.
    expect(groupMembers(pgid)).toEqual([]);
    expect(existsSync(join(dir, 'store', 'engines.json'))).toBe(false);
  });

  it('a recorded PID now used by an unrelated process, or by a live node’s engine, is never touched', async () => {
    // Two processes we own: one stands for an unrelated program that reused a recorded PID, one for the engine
    // of a node that still runs (its owner is this test process: alive, with the start time it has).
    const unrelated = spawn('sleep', ['600'], { stdio: 'ignore' });
    const ownedByLive = spawn('sleep', ['601'], { stdio: 'ignore' });
    others.push(unrelated, ownedByLive);
    await eventually(() => running(unrelated.pid!) && running(ownedByLive.pid!), { what: 'both sleepers running' });
    const self = { pid: process.pid, startTime: stat(process.pid)![19] };
    const deadOwner = { pid: 2 ** 22 + 12345, startTime: '1' };
    const record = (pid: number, cmdline: string[], owner: { pid: number; startTime: string }) => ({
      pid,
      pgid: null,
      cmdline,
      startTime: stat(pid)![19],
      localId: 'outside',
      startedAt: new Date().toISOString(),
      owner,
    });
    writeFileSync(
      join(dir, 'store', 'engines.json'),
      JSON.stringify({
        version: 1,
        engines: [
          record(unrelated.pid!, ['llama-server', '--port', '1234'], deadOwner),
          record(ownedByLive.pid!, ['sleep', '601'], self),
        ],
      }),
    );

    const n = await start();
    // An engine start waits for the leftovers to be handled, so once this answers the records have been judged.
    await engineGroup(n);
    expect(running(unrelated.pid!)).toBe(true);
    expect(running(ownedByLive.pid!)).toBe(true);
    expect(n.output()).not.toMatch(/stopping engine pid/);
    // The live node's record is kept; the stale one is dropped.
    const kept = JSON.parse(readFileSync(join(dir, 'store', 'engines.json'), 'utf8')).engines as { pid: number }[];
    expect(kept.map((r) => r.pid)).toContain(ownedByLive.pid);
    expect(kept.map((r) => r.pid)).not.toContain(unrelated.pid);
  });
});

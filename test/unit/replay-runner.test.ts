import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { type ReplayJob, ReplayRunner } from '../../src-router/cluster/replay-runner';
import { parseNodeConfig } from '../../src-router/config';
import { replaySettingsOf } from '../../src-router/lending/replay';

// The replay runner on real worker threads (small inline scripts stand in for the replay worker): one replay at a
// time, the budget and the client leaving terminate the worker, the slot is free once its thread has exited, and
// what the worker posts becomes the answer or the error.

const job: ReplayJob = {
  kind: 'replay',
  storeDir: '/nonexistent',
  clusterToken: 't',
  members: [],
  settings: replaySettingsOf(parseNodeConfig({}).cluster),
  input: { from: 0, to: 1, settings: {}, maxEvents: 10 },
};
const lines: string[] = [];
const log = {
  info: (m: string) => lines.push(m),
  warn: (a: unknown, b?: string) => lines.push(b ?? String(a)),
} as never;
const script = (code: string) => () =>
  new Worker(`const { parentPort } = require('node:worker_threads');\n${code}`, { eval: true });
/** Never answers (a replay still running). */
const stuck = script('setInterval(() => {}, 1000);');
const answering = script(
  "parentPort.postMessage({ kind: 'log', obj: { nodeId: 'x' }, msg: 'member x not read' }); parentPort.postMessage({ kind: 'result', result: { events: 7 } });",
);

describe('ReplayRunner', () => {
  it('refuses a second replay while one runs and frees its slot when the client leaves', async () => {
    const runner = new ReplayRunner({ start: stuck });
    const client = new AbortController();
    const first = runner.run(job, { signal: client.signal, log });
    await expect(runner.run(job, { log })).rejects.toMatchObject({ status: 429, code: 'replay_busy' });
    client.abort();
    await expect(first).rejects.toMatchObject({ status: 499, code: 'client_closed' });
    expect(runner.busy).toBe(false);
    expect(lines).toContain('replay stopped: the client left');
    const next = new ReplayRunner({ start: answering });
    await expect(next.run(job, { log })).resolves.toEqual({ events: 7 });
    expect(lines).toContain('member x not read');
  });

  it('stops a replay past its budget with a 422 naming it', async () => {
    const runner = new ReplayRunner({ start: stuck, budgetMs: 50 });
    await expect(runner.run(job, { log })).rejects.toMatchObject({
      status: 422,
      code: 'replay_time_budget',
      message: expect.stringMatching(/time budget of 50 ms/),
    });
    expect(runner.busy).toBe(false);
  });

  it("passes the worker's error on, and a worker that fails or cannot start is a 500", async () => {
    const refusing = script(
      "parentPort.postMessage({ kind: 'error', status: 400, code: 'invalid_request', message: 'settings.x: bad', type: 'invalid_request_error', param: 'settings.x' });",
    );
    await expect(new ReplayRunner({ start: refusing }).run(job, { log })).rejects.toMatchObject({
      status: 400,
      param: 'settings.x',
    });
    await expect(
      new ReplayRunner({ start: script("throw new Error('boom')") }).run(job, { log }),
    ).rejects.toMatchObject({ status: 500, code: 'replay_failed', message: expect.stringMatching(/boom/) });
    await expect(new ReplayRunner({ start: script('process.exit(3)') }).run(job, { log })).rejects.toMatchObject({
      status: 500,
      message: expect.stringMatching(/code 3/),
    });
    const missing = new ReplayRunner({
      start: () => {
        throw new Error('replay-worker.js is missing');
      },
    });
    await expect(missing.run(job, { log })).rejects.toMatchObject({
      status: 500,
      message: expect.stringMatching(/missing/),
    });
    expect(missing.busy).toBe(false);
  });

  it('a client gone before the start runs nothing', async () => {
    let started = 0;
    const runner = new ReplayRunner({ start: () => (started++, stuck()) });
    await expect(runner.run(job, { signal: AbortSignal.abort(), log })).rejects.toMatchObject({ status: 499 });
    expect(started).toBe(0);
  });
});

import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startNode, type TestNode } from '../support/node-harness';

interface Lane {
  lane: string;
  loaded: string | null;
  state: string;
  pid: number | null;
  port: number | null;
  inflight: number;
  queued: number;
}

/** Alive and not a zombie (orphans here are reparented to an init that may not reap them). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]);
  } catch {
    return process.platform !== 'linux';
  }
}

// Issue #9, "Engines and state": a ready engine is health-checked (backend.health_interval); one that stops
// answering (frozen with SIGSTOP here: a real process that no longer answers) is killed and restarted, and the
// request that was in it gets a clear 502 `engine_hung`.
describe('ready engines are health-checked (issue #9)', () => {
  let node: TestNode;
  let openai: OpenAI;
  const frozen: number[] = [];
  const lane = async () =>
    (await node.console<{ lanes: Lane[] }>('/router/v1/console/lanes')).lanes.find((l) => l.lane === 'text')!;
  const ask = (content: string, max_tokens: number) =>
    fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chatty', messages: [{ role: 'user', content }], max_tokens }),
    });

  beforeAll(async () => {
    node = await startNode({
      // Checks often, so a freeze is found quickly; the timeout is generous so that a busy test machine never makes a
      // healthy engine look hung.
      config: { backend: { health_interval: '300ms', health_timeout: '1s' } },
      models: {
        chatty: {
          name: 'chatty',
          backend: 'sim',
          capabilities: ['text'],
          sim: { load_time: '50ms', token_time: '10ms' },
        },
      },
    });
    openai = new OpenAI({ baseURL: `${node.url}/v1`, apiKey: 'x', maxRetries: 0 });
  });
  afterAll(async () => {
    // A frozen engine the node failed to kill must not outlive the test.
    for (const pid of frozen) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone, as expected */
      }
    }
    await node?.stop();
  });

  it('a healthy ready engine stays up across many health checks while it serves', async () => {
    await openai.chat.completions.create({
      model: 'chatty',
      messages: [{ role: 'user', content: 'warm' }],
      max_tokens: 2,
    });
    const { pid } = await lane();
    // A request that runs for many health intervals: health is answered while the engine generates.
    const res = await ask('long but fine', 150);
    expect(res.status).toBe(200);
    expect(await lane()).toMatchObject({ state: 'ready', pid });
  });

  it('a frozen engine is killed and restarted; the request in it gets 502 engine_hung; the next one is served', async () => {
    const before = await lane();
    expect(before.state).toBe('ready');
    const oldPid = before.pid!;
    // Long enough (2000 tokens × 10 ms) never to finish before the freeze: the answer can only be the 502.
    const inFlight = ask('long', 2000);
    await eventually(async () => (await lane()).inflight === 1, { what: 'request in the engine' });
    frozen.push(oldPid);
    process.kill(oldPid, 'SIGSTOP');

    const res = await inFlight;
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { message: string; type: string; code: string } };
    expect(body.error).toMatchObject({ code: 'engine_hung', type: 'server_error' });
    expect(body.error.message).toMatch(/engine for model 'chatty' stopped answering its health checks/);

    // Killed (its whole group), and brought back without waiting for a request.
    await eventually(() => !running(oldPid), { what: 'the hung engine killed' });
    const after = await eventually(
      async () => {
        const l = await lane();
        return l.state === 'ready' && l.pid !== null && l.pid !== oldPid && l;
      },
      { what: 'a restarted engine, ready' },
    );
    expect(after.inflight).toBe(0);

    const again = await openai.chat.completions.create({
      model: 'chatty',
      messages: [{ role: 'user', content: 'again' }],
      max_tokens: 2,
    });
    expect(again.model).toBe('chatty');
    expect(again.choices[0].message.content).toBeTruthy();
    expect((await lane()).pid).toBe(after.pid);
  });

  it('a frozen idle engine is replaced too, and the next request is served by the new one', async () => {
    const oldPid = (await lane()).pid!;
    frozen.push(oldPid);
    process.kill(oldPid, 'SIGSTOP');
    // Detected while idle: no request is ever given to the hung engine once it is found out.
    await eventually(async () => (await lane()).pid !== oldPid, { what: 'the hung idle engine replaced' });
    const res = await openai.chat.completions.create({
      model: 'chatty',
      messages: [{ role: 'user', content: 'new engine' }],
      max_tokens: 2,
    });
    expect(res.model).toBe('chatty');
    const now = await lane();
    expect(now.state).toBe('ready');
    expect(now.pid).not.toBe(oldPid);
    expect(running(oldPid)).toBe(false);
  });
});

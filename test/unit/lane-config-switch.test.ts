import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { EngineProcess } from '../../src-router/backends/engine-process';
import { type LaneHost, LaneRuntime } from '../../src-router/backends/lane-runtime';

// A lane whose loaded engine was started from a config no longer in force (changed or removed): it is switched only
// once the lane is idle, as a model switch is — restarted with the new config, or stopped when the model is gone.

class FakeProcess extends EventEmitter {
  state = 'stopped';
  lastError: string | null = null;
  hung = false;
  pid = 0;
  readonly opts = { host: '127.0.0.1', port: 0 };
  constructor(
    readonly config: number,
    port: number,
  ) {
    super();
    this.opts.port = port;
  }
  async start() {
    this.state = 'ready';
  }
  async stop() {
    this.state = 'stopped';
  }
}

function lane() {
  let version = 1;
  let configured = true;
  const made: FakeProcess[] = [];
  const host: LaneHost = {
    createProcess: async () => {
      const p = new FakeProcess(version, made.length + 1);
      made.push(p);
      return p as unknown as EngineProcess;
    },
    publicIdOf: (id) => id,
    onLoad: () => {},
    idleUnloadMs: () => null,
    stale: (_id, proc) => !configured || (proc as unknown as FakeProcess).config !== version,
    configured: () => configured,
    maxRestarts: 3,
    restartCooldownMs: 1000,
    now: Date.now,
  };
  const runtime = new LaneRuntime('text', host);
  return {
    runtime,
    made,
    change: () => {
      version++;
      runtime.configChanged('m');
    },
    remove: (err: Error) => {
      configured = false;
      runtime.configChanged('m', err);
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 0));
/** Lets the lane's promise chains run until `cond` holds (fake processes start and stop without real waits). */
async function until(cond: () => boolean) {
  for (let i = 0; i < 100 && !cond(); i++) await settle();
  expect(cond()).toBe(true);
}

describe('a lane switches an engine of a replaced config only when idle', () => {
  it('a running request keeps its engine; the next waits and gets an engine of the new config', async () => {
    const l = lane();
    const first = await l.runtime.acquire('m');
    l.change();
    let granted = false;
    const next = l.runtime.acquire('m').then((lease) => ((granted = true), lease));
    await settle();
    expect(granted).toBe(false);
    expect(l.made.map((p) => p.state)).toEqual(['ready']);
    first.release();
    const lease = await next;
    expect(l.made.map((p) => [p.config, p.state])).toEqual([
      [1, 'stopped'],
      [2, 'ready'],
    ]);
    expect(lease.process).toBe(l.made[1]);
    lease.release();
  });

  it('an idle engine is restarted with the new config at once', async () => {
    const l = lane();
    (await l.runtime.acquire('m')).release();
    l.change();
    await until(() => l.made[1]?.state === 'ready' && l.runtime.current?.proc === (l.made[1] as unknown));
    expect(l.made.map((p) => [p.config, p.state])).toEqual([
      [1, 'stopped'],
      [2, 'ready'],
    ]);
    expect(l.runtime.current?.proc).toBe(l.made[1]);
  });

  it('a removed model: waiters refused, the running request finishes, then its engine stops and whenGone resolves', async () => {
    const l = lane();
    const running = await l.runtime.acquire('m');
    l.remove(new Error('removed'));
    let gone = false;
    const whenGone = l.runtime.whenGone('m').then(() => (gone = true));
    await settle();
    expect(gone).toBe(false);
    expect(l.made[0].state).toBe('ready');
    running.release();
    await whenGone;
    expect(l.made.map((p) => p.state)).toEqual(['stopped']);
    expect(l.runtime.current).toBeNull();
    expect(l.runtime.holds('m')).toBe(false);
  });
});

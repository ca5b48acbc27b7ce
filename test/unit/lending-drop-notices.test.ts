import { afterEach, describe, expect, it } from 'vitest';
import { DropNotices, type TakenBack } from '../../src-router/lending/drop-notices';
import type { WithdrawResult } from '../../src-router/lending/ports';

// Issue #25: a request the owner took back from a helper no one could reach is withdrawn there once the helper
// answers again; one that ran there too is counted. Rounds are driven by hand (no timers waited on).
const taken = (requestId: string, at = 0): TakenBack => ({
  requestId,
  linkId: 'l1',
  owner: { nodeId: 'o', model: 'a' },
  helper: { nodeId: 'h', model: 'b' },
  at,
});

let notices: DropNotices | undefined;
afterEach(() => notices?.stop());

describe('drop notices for requests taken back from an unreachable helper', () => {
  it('keeps a notice while the helper does not answer, and tells it once it does', async () => {
    let reachable = false;
    const asked: string[][] = [];
    const told: [string, WithdrawResult][] = [];
    notices = new DropNotices({
      withdraw: async (_url, ids) => {
        asked.push(ids);
        if (!reachable) throw new Error('timed out');
        return { r1: 'withdrawn', r2: 'started' };
      },
      told: (t, r) => told.push([t.requestId, r]),
      now: () => 0,
    });
    notices.add('http://h', taken('r1'));
    notices.add('http://h', taken('r2'));
    await notices.send();
    expect(told).toEqual([]);
    expect(notices.pending()).toEqual({ 'http://h': ['r1', 'r2'] });
    reachable = true;
    await notices.send();
    expect(told).toEqual([
      ['r1', 'withdrawn'],
      ['r2', 'started'],
    ]);
    expect(notices.pending()).toEqual({});
    expect(asked).toEqual([
      ['r1', 'r2'],
      ['r1', 'r2'],
    ]);
  });

  it('is bounded in count (the oldest goes) and in age', async () => {
    let clock = 0;
    notices = new DropNotices({
      withdraw: async () => Promise.reject(new Error('down')),
      told: () => {},
      now: () => clock,
      max: 2,
      keepMs: 1_000,
    });
    notices.add('http://h', taken('r1', 0));
    notices.add('http://h', taken('r2', 10));
    notices.add('http://g', taken('r3', 20));
    expect(notices.pending()).toEqual({ 'http://h': ['r2'], 'http://g': ['r3'] });
    clock = 1_015;
    await notices.send();
    expect(notices.pending()).toEqual({ 'http://g': ['r3'] });
  });
});

import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { LaneRestorer, Supervisor } from '../../src-router/backends';
import { HelperSide } from '../../src-router/lending/helper-side';

// Issue #25: a forward that broke off is resolved at the helper only after the forwarder's own time-out
// (cluster.request_timeout, 10 minutes by default): a borrowed job that ended early in it must still have its answer
// kept then, or the owner's client is told it was lost.
describe('a helper keeps the answers of borrowed requests for the request time-out', () => {
  const REQUEST_TIMEOUT_MS = 10 * 60_000;
  function helper() {
    let clock = 0;
    const side = new HelperSide({
      nodeId: 'h',
      decisions: { add: () => {} },
      log: console as unknown as FastifyBaseLogger,
      now: () => clock,
      supervisor: {} as Supervisor,
      restorer: {} as LaneRestorer,
      queues: () => [],
      linkFor: () => undefined,
      ownPending: () => 0,
      answerKeepMs: REQUEST_TIMEOUT_MS + 2 * 60_000,
    });
    return { side, advance: (ms: number) => (clock += ms) };
  }

  it('an answer kept early in the time-out is still there when the forwarder asks after it, though later ones came', async () => {
    const { side, advance } = helper();
    side.keepAnswer('early', { status: 200, body: { id: 'early' } });
    advance(REQUEST_TIMEOUT_MS - 1_000);
    side.keepAnswer('later', { status: 200, body: { id: 'later' } });
    advance(30_000); // the forward's time-out, a withdraw and the first long-poll
    expect(await side.answerOf('early', 0)).toEqual({ state: 'answered', status: 200, body: { id: 'early' } });
  });

  it('is bounded: an answer is dropped once the time-out and the keep time have passed', async () => {
    const { side, advance } = helper();
    side.keepAnswer('old', null);
    advance(REQUEST_TIMEOUT_MS + 3 * 60_000);
    side.keepAnswer('new', null);
    expect(await side.answerOf('old', 0)).toEqual({ state: 'unknown' });
    expect(await side.answerOf('new', 0)).toEqual({ state: 'failed' });
  });
});

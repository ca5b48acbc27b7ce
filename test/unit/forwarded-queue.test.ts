import { describe, expect, it } from 'vitest';
import {
  factsFromHeaders,
  positionOfComment,
  queueCommentLine,
  queueMsOf,
} from '../../src-router/contract/answer-facts';
import { sseEvents } from '../../src-router/serve';
import { readQueueComments } from '../../src-router/serve/forwarded-queue';

// Issue #15: a master relays the queue comments of a forwarded stream that waits in its slave's router queue. The
// master's SSE parser drops comment lines, so the leading comments are read before the events are relayed; the
// slave's queue time then comes as a trailer (its head went out with the first comment).

const headers = (h: Record<string, string>) => ({ get: (name: string) => h[name.toLowerCase()] ?? null });

/** Chunks handed out one at a time: the next only when `release()` is called (no timers). */
function gated(chunks: (string | Uint8Array)[]) {
  const waiters: (() => void)[] = [];
  let released = 0;
  return {
    release: () => {
      released++;
      waiters.splice(0).forEach((w) => w());
    },
    body: (async function* () {
      for (let i = 0; i < chunks.length; i++) {
        while (released <= i) await new Promise<void>((r) => waiters.push(r));
        yield chunks[i];
      }
    })(),
  };
}

async function all(body: AsyncIterable<Uint8Array | string>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const e of sseEvents(body)) out.push(e);
  return out;
}

describe('queue comment lines', () => {
  it('the line a waiting stream sends is read back as its position; other lines are not', () => {
    expect(queueCommentLine(3)).toBe(': queued, position 3');
    expect(positionOfComment(queueCommentLine(12))).toBe(12);
    expect(positionOfComment(': keep-alive')).toBeNull();
    expect(positionOfComment('data: {"a":1}')).toBeNull();
  });
});

describe('readQueueComments', () => {
  it('tells the position once, follows later comments, stops at the first event and keeps the whole body from there', async () => {
    const src = gated([
      ': queued, position 3\n\n',
      ': queued, position 2\n\n: queued, position 1\n',
      '\ndata: {"n":1}\n\ndata: {"n',
      '":2}\n\ndata: [DONE]\n\n',
    ]);
    let position: (() => number | null) | undefined;
    let told = 0;
    const reading = readQueueComments(src.body, (p) => {
      position = p;
      told++;
    });
    src.release();
    await expect.poll(() => position?.()).toBe(3);
    src.release();
    await expect.poll(() => position?.()).toBe(1);
    src.release();
    const rest = await reading;
    expect(told).toBe(1);
    expect(position!()).toBeNull();
    src.release();
    expect(await all(rest)).toEqual([{ n: 1 }, { n: 2 }, '[DONE]']);
  });

  it('a stream that never waited is passed on whole, and nobody is told a position', async () => {
    let told = false;
    const rest = await readQueueComments(
      (async function* () {
        yield 'data: {"n":1}\n\ndata: [DONE]\n\n';
      })(),
      () => (told = true),
    );
    expect(told).toBe(false);
    expect(await all(rest)).toEqual([{ n: 1 }, '[DONE]']);
  });

  it('a character split across chunks at the first event stays whole', async () => {
    const bytes = new TextEncoder().encode(': queued, position 1\n\ndata: {"t":"é"}\n\n');
    const cut = bytes.indexOf(0xc3) + 1;
    const rest = await readQueueComments(
      (async function* () {
        yield bytes.slice(0, cut);
        yield bytes.slice(cut);
      })(),
      () => {},
    );
    expect(await all(rest)).toEqual([{ t: 'é' }]);
  });

  it('a stream that breaks while waiting rejects, and the position is gone', async () => {
    let position: (() => number | null) | undefined;
    const reading = readQueueComments(
      (async function* () {
        yield ': queued, position 2\n\n';
        throw new Error('socket hang up');
      })(),
      (p) => (position = p),
    );
    await expect(reading).rejects.toThrow('socket hang up');
    expect(position?.()).toBeNull();
  });
});

describe('factsFromHeaders', () => {
  it('a slave that waited sends its queue time as a trailer: known at the end', () => {
    expect(
      factsFromHeaders(headers({ 'x-routerdesk-node': 'gpu-a', trailer: 'x-routerdesk-queue-ms' }), 'fallback'),
    ).toEqual({ node: 'gpu-a', queueMs: null, lentTo: null, queueMsAtEnd: true });
  });

  it('a slave that did not wait (or an older one) sends it in its head', () => {
    expect(
      factsFromHeaders(headers({ 'x-routerdesk-node': 'gpu-a', 'x-routerdesk-queue-ms': '12' }), 'fallback'),
    ).toEqual({ node: 'gpu-a', queueMs: 12, lentTo: null });
    expect(factsFromHeaders(headers({}), 'fallback')).toEqual({ node: 'fallback', queueMs: null, lentTo: null });
  });

  it('a queue time is a non-negative number or nothing', () => {
    expect([
      queueMsOf('0'),
      queueMsOf('41'),
      queueMsOf('-1'),
      queueMsOf('soon'),
      queueMsOf(undefined),
      queueMsOf(null),
    ]).toEqual([0, 41, null, null, null, null]);
  });
});

import { describe, expect, it } from 'vitest';
import { goneOf } from '../../src-router/backends/call-end';
import { queueComment } from '../../src-router/http/queue-notice';
import { ModelQueue, type QueueItem } from '../../src-router/queue';

// Issue #15: a stream waiting in a router queue is told its position in SSE comments, at most one a second, none
// once it runs. The position is the queue's own order (own before borrowed, then first arrival).

const item = (id: string, arrivedAt: number, over: Partial<QueueItem> = {}): QueueItem => ({
  id,
  arrivedAt,
  stream: true,
  bodyBytes: 10,
  work: 8,
  borrowed: false,
  returned: false,
  state: 'queued',
  ...over,
});

describe('ModelQueue.position', () => {
  it('1-based among the waiting requests; null at the engine and once gone', () => {
    const q = new ModelQueue(
      'm',
      1,
      () => {},
      () => 0,
    );
    const [a, b, c] = [item('a', 1), item('b', 2), item('c', 3)];
    void q.enqueue(a);
    void q.enqueue(b);
    void q.enqueue(c);
    expect([q.position(a), q.position(b), q.position(c)]).toEqual([null, 1, 2]);
    q.finished(a);
    expect([q.position(b), q.position(c)]).toEqual([null, 1]);
  });

  it('own work goes ahead of borrowed, a returned request keeps its first arrival', () => {
    const q = new ModelQueue(
      'm',
      1,
      () => {},
      () => 0,
    );
    void q.enqueue(item('running', 0));
    const borrowed = item('borrowed', 1, { borrowed: true });
    void q.enqueue(borrowed);
    const late = item('late', 5);
    void q.enqueue(late);
    const back = item('back', 2, { returned: true });
    void q.enqueue(back);
    expect([q.position(back), q.position(late), q.position(borrowed)]).toEqual([1, 2, 3]);
  });

  it('an aborted wait leaves the queue and the ones behind move up', () => {
    const q = new ModelQueue(
      'm',
      1,
      () => {},
      () => 0,
    );
    void q.enqueue(item('running', 0));
    const ctl = new AbortController();
    const gone = item('gone', 1);
    q.enqueue(gone, goneOf(ctl.signal)).catch(() => {});
    const next = item('next', 2);
    void q.enqueue(next);
    ctl.abort();
    expect([q.position(gone), q.position(next)]).toEqual([null, 1]);
  });
});

describe('queueComment', () => {
  it('the first comment at once, then at most one per second', () => {
    expect(queueComment(3, null, 10_000)).toBe(': queued, position 3\n\n');
    expect(queueComment(2, 10_000, 10_999)).toBeNull();
    expect(queueComment(2, 10_000, 11_000)).toBe(': queued, position 2\n\n');
    expect(queueComment(2, 10_000, 10_500, 400)).toBe(': queued, position 2\n\n');
  });

  it('none once it no longer waits', () => {
    expect(queueComment(null, null, 10_000)).toBeNull();
    expect(queueComment(null, 1, 10_000)).toBeNull();
  });

  it('a comment is an SSE comment line: clients that parse events skip it', () => {
    const c = queueComment(1, null, 0)!;
    expect(
      c
        .split('\n')
        .filter(Boolean)
        .every((l) => l.startsWith(':')),
    ).toBe(true);
  });
});

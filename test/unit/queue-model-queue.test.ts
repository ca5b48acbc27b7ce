import { describe, expect, it } from 'vitest';
import { type ClientGone, goneOf } from '../../src-router/backends/call-end';
import { type Dispatch, ModelQueue, type QueueItem } from '../../src-router/queue';

let n = 0;
const item = (o: Partial<QueueItem> = {}): QueueItem => ({
  id: `r${++n}`,
  arrivedAt: n,
  stream: false,
  bodyBytes: 100,
  work: 8,
  borrowed: false,
  returned: false,
  state: 'queued',
  ...o,
});

function track(q: ModelQueue, it: QueueItem) {
  const seen: { d?: Dispatch } = {};
  void q.enqueue(it).then((d) => (seen.d = d));
  return seen;
}
const tick = () => new Promise((r) => setImmediate(r));

describe('router queue of an enrolled model (QUEUE-1..5)', () => {
  it('lets at most depth requests reach the engine and tops it back up', async () => {
    const q = new ModelQueue('a', 2);
    const items = Array.from({ length: 5 }, () => item());
    const seen = items.map((i) => track(q, i));
    await tick();
    expect(seen.map((s) => s.d?.kind)).toEqual(['engine', 'engine', undefined, undefined, undefined]);
    q.finished(items[0]);
    await tick();
    expect(seen[2].d?.kind).toBe('engine');
    expect(q.activeCount).toBe(2);
  });

  it('reports a new held request (LEASE-2); one that goes straight to the engine is reported started, not enqueued (issue #14)', () => {
    const events: string[] = [];
    const q = new ModelQueue('a', 2, (e) => events.push(e));
    track(q, item());
    track(q, item());
    expect(events).toEqual(['started', 'started']);
    track(q, item());
    expect(events).toEqual(['started', 'started', 'enqueued']);
  });

  it('own work goes ahead of borrowed work; by first arrival within each (QUEUE-4, QUEUE-5)', async () => {
    const q = new ModelQueue('a', 1);
    const first = item();
    track(q, first);
    const borrowed = item({ borrowed: true, arrivedAt: 0 });
    const own = item({ arrivedAt: 1000 });
    const sb = track(q, borrowed);
    const so = track(q, own);
    q.finished(first);
    await tick();
    expect(so.d?.kind).toBe('engine');
    expect(sb.d).toBeUndefined();
  });

  it('lends only waiting, non-streaming, never-returned own requests; a returned one keeps its first arrival', async () => {
    const q = new ModelQueue('a', 1);
    track(q, item());
    const stream = item({ stream: true });
    const plain = item({ arrivedAt: 0 });
    track(q, stream);
    const sp = track(q, plain);
    await tick();
    expect(q.lendable()).toEqual([plain]);
    expect(q.lend(plain, { helper: 'h' })).toBe(true);
    await tick();
    expect(sp.d).toEqual({ kind: 'lend', lease: { helper: 'h' } });
    const back = q.requeue(plain);
    expect(plain).toMatchObject({ returned: true, state: 'queued' });
    expect(q.view().waiting[0]).toBe(plain); // its first arrival is older than the stream's
    expect(q.lendable()).toEqual([]);
    void back;
  });

  it('holds the second slot for a faster helper only, and releases it when the owner would idle (HOLD-1/2)', async () => {
    const q = new ModelQueue('a', 2);
    const asked: string[] = [];
    q.holdPolicy = (it) => (asked.push(it.id), true);
    const a = item();
    const b = item();
    const c = item();
    const sa = track(q, a);
    const sb = track(q, b);
    const sc = track(q, c);
    await tick();
    expect(sa.d?.kind).toBe('engine');
    expect(sb.d).toBeUndefined();
    expect(b.state).toBe('held');
    expect(sc.d).toBeUndefined(); // the second slot stays the held request's turn
    expect(asked).toEqual([b.id]);
    q.finished(a); // the owner would idle: the held request goes to it
    await tick();
    expect(sb.d?.kind).toBe('engine');
  });

  it('issue #25: with a deeper backend, the hold keeps only the second slot; the third and later slots fill (HOLD-2)', async () => {
    const q = new ModelQueue('a', 4);
    q.holdPolicy = () => true;
    const [a, b, c, d, e] = Array.from({ length: 5 }, () => item());
    const [sa, sb, sc, sd, se] = [a, b, c, d, e].map((i) => track(q, i));
    await tick();
    expect(sa.d?.kind).toBe('engine');
    expect(b.state).toBe('held');
    // Slots three and four go to the next requests; the held one keeps the second slot's turn.
    expect([sb.d, sc.d?.kind, sd.d?.kind, se.d]).toEqual([undefined, 'engine', 'engine', undefined]);
    expect(q.activeCount).toBe(3);
    q.finished(c);
    await tick();
    expect(se.d?.kind).toBe('engine');
    expect(sb.d).toBeUndefined();
    for (const x of [a, d, e]) q.finished(x);
    await tick();
    expect(sb.d?.kind).toBe('engine'); // the owner would idle: the held request goes to it
  });

  it('hands back borrowed requests that are still waiting (HELPER-1)', async () => {
    const q = new ModelQueue('a', 1);
    track(q, item({ borrowed: true }));
    const waiting = track(q, item({ borrowed: true }));
    expect(q.returnBorrowed('own_work_arrived')).toHaveLength(1);
    await tick();
    expect(waiting.d).toEqual({ kind: 'returned', reason: 'own_work_arrived' });
  });

  it('listens for the client only while it waits: the listener goes once the request has its turn (issue #14)', async () => {
    const q = new ModelQueue('a', 1);
    const first = item();
    track(q, first);
    const gone = goneOf(new AbortController().signal);
    let listeners = 0;
    const counted: ClientGone = {
      get aborted() {
        return gone.aborted;
      },
      signal: gone.signal,
      onAbort(fn) {
        listeners++;
        const off = gone.onAbort(fn);
        return () => {
          listeners--;
          off();
        };
      },
    };
    const second = q.enqueue(item(), counted);
    expect(listeners).toBe(1);
    q.finished(first);
    expect((await second).kind).toBe('engine');
    expect(listeners).toBe(0);
  });

  it('a request whose client is already gone is refused at once: never queued, never reported', async () => {
    const events: string[] = [];
    const q = new ModelQueue('a', 1, (e) => events.push(e));
    track(q, item());
    const ctl = new AbortController();
    ctl.abort();
    await expect(q.enqueue(item(), goneOf(ctl.signal))).rejects.toThrow(/client closed/);
    expect(q.waitingCount).toBe(0);
    expect(events).toEqual(['started']);
  });

  it('a client that leaves while waiting is withdrawn', async () => {
    const q = new ModelQueue('a', 1);
    track(q, item());
    const ctl = new AbortController();
    const p = q.enqueue(item(), goneOf(ctl.signal));
    ctl.abort();
    await expect(p).rejects.toThrow(/client closed/);
    expect(q.waitingCount).toBe(0);
  });
});

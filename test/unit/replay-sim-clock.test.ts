import { afterEach, describe, expect, it, vi } from 'vitest';
import { SimClock } from '../../src-router/lending/replay';

describe('the replay simulated clock', () => {
  afterEach(() => vi.restoreAllMocks());

  it('runs events in time order and moves the clock to each', () => {
    const c = new SimClock(1000);
    const seen: [string, number][] = [];
    c.at(1300, () => seen.push(['c', c.now()]));
    c.at(1100, () => seen.push(['a', c.now()]));
    c.after(() => seen.push(['b', c.now()]), 200);
    expect(c.run(100)).toEqual({ events: 3, capped: false });
    expect(seen).toEqual([
      ['a', 1100],
      ['b', 1200],
      ['c', 1300],
    ]);
    expect(c.now()).toBe(1300);
  });

  it('breaks ties in the order events were scheduled, also for events scheduled while running', () => {
    const c = new SimClock(0);
    const seen: string[] = [];
    c.at(10, () => {
      seen.push('first');
      c.at(10, () => seen.push('scheduled-during'));
    });
    c.at(10, () => seen.push('second'));
    c.at(10, () => seen.push('third'));
    c.run(100);
    expect(seen).toEqual(['first', 'second', 'third', 'scheduled-during']);
  });

  it('never goes back in time: an event in the past runs now; cancelled events never run', () => {
    const c = new SimClock(0);
    const seen: number[] = [];
    c.at(50, () => {
      c.at(10, () => seen.push(c.now()));
      const cancel = c.after(() => seen.push(-1), 5);
      cancel();
    });
    c.run(100);
    expect(seen).toEqual([50]);
    expect(c.pending).toBe(0);
  });

  it('stops at the event cap and can go on; `until` leaves later events queued', () => {
    const c = new SimClock(0);
    let n = 0;
    for (let i = 0; i < 10; i++) c.at(i, () => n++);
    expect(c.run(4)).toEqual({ events: 4, capped: true });
    expect(n).toBe(4);
    expect(c.run(100, 6)).toEqual({ events: 3, capped: false });
    expect(c.now()).toBe(6);
    expect(c.run(100).events).toBe(3);
  });

  it('reads no wall clock and never sleeps: a day of simulated time runs at once', () => {
    const dateNow = vi.spyOn(Date, 'now').mockImplementation(() => {
      throw new Error('wall clock read');
    });
    const perfNow = vi.spyOn(performance, 'now').mockImplementation(() => {
      throw new Error('wall clock read');
    });
    const timeout = vi.spyOn(globalThis, 'setTimeout');
    const c = new SimClock(0);
    let last = 0;
    const step = () => {
      last = c.now();
      if (c.now() < 86_400_000) c.after(step, 60_000);
    };
    c.at(0, step);
    c.run(10_000);
    expect(last).toBe(86_400_000);
    expect(dateNow).not.toHaveBeenCalled();
    expect(perfNow).not.toHaveBeenCalled();
    expect(timeout).not.toHaveBeenCalled();
  });

  it('keeps heap order across many random schedules', () => {
    const c = new SimClock(0);
    const out: number[] = [];
    let x = 7;
    for (let i = 0; i < 500; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      const t = x % 1000;
      c.at(t, () => out.push(c.now()));
    }
    c.run(1000);
    expect(out).toEqual([...out].sort((a, b) => a - b));
    expect(out).toHaveLength(500);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { deadline } from '../../src-router/backends';

describe('deadline', () => {
  afterEach(() => vi.useRealTimers());

  it('aborts with a TimeoutError when the time runs out', () => {
    vi.useFakeTimers();
    const d = deadline(1000);
    vi.advanceTimersByTime(999);
    expect(d.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as Error).name).toBe('TimeoutError');
  });

  it('leaves no timer behind once cleared', () => {
    vi.useFakeTimers();
    const d = deadline(600_000);
    expect(vi.getTimerCount()).toBe(1);
    d.clear();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(600_000);
    expect(d.signal.aborted).toBe(false);
  });
});

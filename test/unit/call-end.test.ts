import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CallEnd, goneOf } from '../../src-router/backends/call-end';

// Issue #14: what ends one proxied call — the client leaving, its deadline, a cancel — in one object, without an
// AbortSignal per call. Timers are vitest's fake ones: nothing here sleeps.

describe('CallEnd', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('ends when the client leaves: hooks run once, the error is an AbortError', () => {
    const client = new AbortController();
    const end = new CallEnd(goneOf(client.signal), 60_000);
    const hook = vi.fn();
    end.onEnd(hook);
    expect(end.ended).toBe(false);
    client.abort();
    client.abort();
    expect(end.reason).toBe('client');
    expect(hook).toHaveBeenCalledTimes(1);
    expect(end.error().name).toBe('AbortError');
  });

  it('ends at its deadline with a TimeoutError, and not before', () => {
    const end = new CallEnd(undefined, 5_000);
    const hook = vi.fn();
    end.onEnd(hook);
    vi.advanceTimersByTime(4_999);
    expect(end.ended).toBe(false);
    vi.advanceTimersByTime(1);
    expect(end.reason).toBe('timeout');
    expect(hook).toHaveBeenCalledTimes(1);
    expect(end.error()).toMatchObject({ name: 'TimeoutError', message: 'no answer within 5000 ms' });
  });

  it('a cancel ends it; the first reason stays', () => {
    const client = new AbortController();
    const end = new CallEnd(goneOf(client.signal), 1_000);
    end.cancel();
    client.abort();
    vi.advanceTimersByTime(2_000);
    expect(end.reason).toBe('cancelled');
  });

  it('once cleared, no timer is left and neither the deadline nor the client end it (the call is over)', () => {
    const client = new AbortController();
    const end = new CallEnd(goneOf(client.signal), 1_000);
    const hook = vi.fn();
    end.onEnd(hook);
    expect(vi.getTimerCount()).toBe(1);
    end.clear();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5_000);
    client.abort();
    expect(end.ended).toBe(false);
    expect(hook).not.toHaveBeenCalled();
  });

  it("once cleared, a cancel changes nothing either: its hooks (the call's abort) do not run", () => {
    const end = new CallEnd(undefined, 1_000);
    const hook = vi.fn();
    end.onEnd(hook);
    end.clear();
    end.cancel();
    expect(end.ended).toBe(false);
    expect(end.reason).toBeNull();
    expect(hook).not.toHaveBeenCalled();
  });

  it('a client that already left ends it at once; a hook added after the end runs at once', () => {
    const client = new AbortController();
    client.abort();
    const end = new CallEnd(goneOf(client.signal), 1_000);
    expect(end.reason).toBe('client');
    const hook = vi.fn();
    end.onEnd(hook);
    expect(hook).toHaveBeenCalledTimes(1);
  });

  it('an unsubscribed hook does not run', () => {
    const end = new CallEnd(undefined, 1_000);
    const kept = vi.fn();
    const dropped = vi.fn();
    end.onEnd(kept);
    end.onEnd(dropped)();
    end.cancel();
    expect(kept).toHaveBeenCalledTimes(1);
    expect(dropped).not.toHaveBeenCalled();
  });

  it('toSignal gives one real AbortSignal that aborts with the call, with the same error', () => {
    const end = new CallEnd(undefined, 1_000);
    const signal = end.toSignal();
    expect(end.toSignal()).toBe(signal);
    expect(signal.aborted).toBe(false);
    vi.advanceTimersByTime(1_000);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).name).toBe('TimeoutError');
  });
});

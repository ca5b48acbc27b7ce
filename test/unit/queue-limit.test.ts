import { describe, expect, it } from 'vitest';
import { QueueLimit } from '../../src-router/serve/queue-limit';

// Issue #9: bounded waiting, per model and per node; 429 with a Retry-After beyond it.
describe('queue limit', () => {
  const models: Record<string, { maxQueue: number | null; parallel: number }> = {
    a: { maxQueue: 2, parallel: 1 },
    b: { maxQueue: null, parallel: 2 },
  };
  it('a model waits beyond what its engine generates at once, up to its max_queue', () => {
    const q = new QueueLimit(100, (id) => models[id]);
    const a = [q.enter('a', 'A'), q.enter('a', 'A'), q.enter('a', 'A')]; // 1 generating, 2 waiting
    expect(q.waiting('a')).toBe(2);
    expect(() => q.enter('a', 'A')).toThrow(
      expect.objectContaining({ status: 429, code: 'queue_full', extra: { retry_after: '1' } }),
    );
    a[0]();
    a[0](); // once only
    expect(q.waiting('a')).toBe(1);
    expect(() => q.enter('a', 'A')).not.toThrow();
  });

  it("the node bound counts every model's waiting requests; requests within the engine's slots never count", () => {
    const q = new QueueLimit(2, (id) => models[id]);
    q.enter('b', 'B');
    q.enter('b', 'B'); // both generating (parallel 2)
    expect(q.waiting()).toBe(0);
    q.enter('b', 'B');
    q.enter('a', 'A');
    q.enter('a', 'A'); // b 1 + a 1 waiting
    expect(q.waiting()).toBe(2);
    expect(() => q.enter('b', 'B')).toThrow(/server.max_queue/);
  });
});

import { describe, expect, it } from 'vitest';
import {
  backoffDelayMs,
  createKeySpace,
  EmbeddedKeySpace,
  KeySpaceError,
  normalizeTtlMs,
  RedisKeySpace,
  redactRedisUrl,
} from '../../src-router/kv';

function clocked() {
  let t = 1_000_000;
  const ks = new EmbeddedKeySpace({ now: () => t, sweepIntervalMs: 0 });
  return { ks, advance: (ms: number) => (t += ms) };
}

describe('embedded keyspace with an injected clock', () => {
  it('counts pttl down with the clock and expires exactly at the deadline', async () => {
    const { ks, advance } = clocked();
    await ks.set('k', 'v', { ttlMs: 1000 });
    expect(await ks.pttl('k')).toBe(1000);
    advance(999);
    expect(await ks.pttl('k')).toBe(1);
    expect(await ks.get('k')).toBe('v');
    advance(1);
    expect(await ks.get('k')).toBeNull();
    expect(await ks.pttl('k')).toBe(-2);
  });

  it('set without ttl clears the ttl; a key without ttl never expires', async () => {
    const { ks, advance } = clocked();
    await ks.set('k', 'a', { ttlMs: 100 });
    await ks.set('k', 'b');
    advance(10_000_000);
    expect(await ks.get('k')).toBe('b');
    expect(await ks.pttl('k')).toBe(-1);
  });

  it('a new ttl replaces the old one; fractional ttls round up to whole ms', async () => {
    const { ks, advance } = clocked();
    await ks.set('k', 'a', { ttlMs: 100 });
    advance(50);
    await ks.set('k', 'b', { ttlMs: 10.2 });
    expect(await ks.pttl('k')).toBe(11);
    advance(11);
    expect(await ks.get('k')).toBeNull();
  });

  it('sweep drops only expired entries; reads never see an expired one before the sweep', async () => {
    const { ks, advance } = clocked();
    await ks.set('short', '1', { ttlMs: 10 });
    await ks.set('long', '2', { ttlMs: 1000 });
    await ks.set('forever', '3');
    advance(20);
    expect(ks.size).toBe(3);
    expect(ks.sweep()).toBe(1);
    expect(ks.size).toBe(2);
    expect(await ks.get('long')).toBe('2');
    expect(await ks.get('forever')).toBe('3');
  });

  it('rejects invalid ttls with RangeError before touching the key', async () => {
    const { ks } = clocked();
    await ks.set('k', 'kept');
    await expect(ks.set('k', 'x', { ttlMs: 0 })).rejects.toBeInstanceOf(RangeError);
    expect(await ks.get('k')).toBe('kept');
    expect(() => normalizeTtlMs(-1)).toThrow(RangeError);
    expect(normalizeTtlMs(undefined)).toBeUndefined();
  });

  it('is closed for business after close()', async () => {
    const ks = new EmbeddedKeySpace();
    expect(ks.reachable).toBe(true);
    expect(await ks.waitReachable()).toBe(true);
    await ks.close();
    expect(ks.reachable).toBe(false);
    await expect(ks.pttl('k')).rejects.toBeInstanceOf(KeySpaceError);
    await expect(ks.del('k')).rejects.toMatchObject({ code: 'keyspace_unavailable' });
  });
});

describe('keyspace helpers', () => {
  it('backoff doubles from 100 ms and caps at 5 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 50, 10_000].map((n) => backoffDelayMs(n))).toEqual([
      100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000,
    ]);
    expect(backoffDelayMs(3, 50, 150)).toBe(150);
  });

  it('redacts the password of a redis url', () => {
    expect(redactRedisUrl('redis://user:hunter2@10.0.0.5:6379/0')).toBe('redis://user:***@10.0.0.5:6379/0');
    expect(redactRedisUrl('redis://10.0.0.5:6379')).toBe('redis://10.0.0.5:6379');
  });

  it('createKeySpace picks embedded without a url and redis with one', async () => {
    const embedded = createKeySpace();
    expect(embedded).toBeInstanceOf(EmbeddedKeySpace);
    expect(createKeySpace('  ')).toBeInstanceOf(EmbeddedKeySpace);
    await embedded.close();
    // Port 1 on loopback refuses at once; the client must not throw or emit unhandled errors.
    const redis = createKeySpace('redis://127.0.0.1:1');
    expect(redis).toBeInstanceOf(RedisKeySpace);
    expect(redis.kind).toBe('redis');
    await expect(redis.get('k')).rejects.toBeInstanceOf(KeySpaceError);
    expect(redis.reachable).toBe(false);
    await redis.close();
  });
});

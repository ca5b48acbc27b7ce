import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  EmbeddedKeySpace,
  KEYSPACE_VALUE_LIMIT,
  type KeySpace,
  KeySpaceError,
  KeySpaceValueTooLarge,
  RedisKeySpace,
} from '../../src-router/kv';
import { startRedis, type TestRedis } from '../support/redis-server';

/** Polls `probe` until it returns true or `ms` pass; returns whether it did. No fixed sleeps. */
async function eventually(probe: () => Promise<boolean>, ms: number, every = 25): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, every));
  }
}

let seq = 0;
const key = (name: string) => `test:${process.pid}:${++seq}:${name}`;

/**
 * The keyspace contract, run unchanged against every implementation: the same inputs must give the same answers.
 * `make` returns a fresh, open keyspace; the suite closes what it makes.
 */
function keySpaceContract(label: string, make: () => Promise<KeySpace>) {
  describe(`KeySpace contract: ${label}`, () => {
    const opened: KeySpace[] = [];
    const open = async () => {
      const ks = await make();
      opened.push(ks);
      return ks;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((ks) => ks.close()));
    });

    it('a missing key reads null with pttl -2, and del of it succeeds', async () => {
      const ks = await open();
      const k = key('missing');
      expect(await ks.get(k)).toBeNull();
      expect(await ks.pttl(k)).toBe(-2);
      await expect(ks.del(k)).resolves.toBeUndefined();
      expect(ks.reachable).toBe(true);
    });

    it('set without ttl stores the value with pttl -1; values round-trip exactly', async () => {
      const ks = await open();
      const k = key('plain');
      for (const value of ['v1', '', '{"a":[1,2]}', 'ünïcødé ✓ 🚀', 'line\nbreak']) {
        await ks.set(k, value);
        expect(await ks.get(k)).toBe(value);
      }
      expect(await ks.pttl(k)).toBe(-1);
    });

    it('set with ttl gives a pttl within (0, ttl]; a later set with another ttl replaces it', async () => {
      const ks = await open();
      const k = key('ttl');
      await ks.set(k, 'a', { ttlMs: 60_000 });
      const first = await ks.pttl(k);
      expect(first).toBeGreaterThan(55_000);
      expect(first).toBeLessThanOrEqual(60_000);
      await ks.set(k, 'b', { ttlMs: 5_000 });
      const second = await ks.pttl(k);
      expect(second).toBeGreaterThan(0);
      expect(second).toBeLessThanOrEqual(5_000);
      expect(await ks.get(k)).toBe('b');
    });

    it('set without ttl clears an existing ttl', async () => {
      const ks = await open();
      const k = key('clear');
      await ks.set(k, 'a', { ttlMs: 30_000 });
      await ks.set(k, 'b');
      expect(await ks.pttl(k)).toBe(-1);
      expect(await ks.get(k)).toBe('b');
    });

    it('del removes a key, with or without ttl', async () => {
      const ks = await open();
      const a = key('del-a');
      const b = key('del-b');
      await ks.set(a, '1');
      await ks.set(b, '2', { ttlMs: 30_000 });
      await ks.del(a);
      await ks.del(b);
      expect(await ks.get(a)).toBeNull();
      expect(await ks.pttl(b)).toBe(-2);
    });

    it('a key with a short ttl disappears: get null, pttl -2', async () => {
      const ks = await open();
      const k = key('expire');
      const kept = key('kept');
      await ks.set(k, 'soon gone', { ttlMs: 200 });
      await ks.set(kept, 'stays');
      expect(await ks.get(k)).toBe('soon gone');
      expect(await eventually(async () => (await ks.get(k)) === null, 3_000)).toBe(true);
      expect(await ks.pttl(k)).toBe(-2);
      expect(await ks.get(kept)).toBe('stays');
    });

    it('refuses a ttl that is not a finite number above zero, and leaves the key untouched', async () => {
      const ks = await open();
      const k = key('bad-ttl');
      await ks.set(k, 'kept');
      for (const ttlMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(ks.set(k, 'x', { ttlMs })).rejects.toBeInstanceOf(RangeError);
      }
      expect(await ks.get(k)).toBe('kept');
      expect(await ks.pttl(k)).toBe(-1);
    });

    it('a value over the bound is refused whole by set, the key keeps what it held, and the keyspace goes on', async () => {
      const ks = await open();
      const k = key('too-large');
      await ks.set(k, 'kept');
      const big = 'x'.repeat(KEYSPACE_VALUE_LIMIT + 1);
      const refused = await ks.set(k, big).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(KeySpaceValueTooLarge);
      expect(refused).toMatchObject({ code: 'keyspace_value_too_large', key: k, bytes: KEYSPACE_VALUE_LIMIT + 1 });
      expect(await ks.get(k)).toBe('kept');
      // A value of exactly the bound (in UTF-8 bytes, not characters) is taken.
      const exact = `${'é'.repeat(KEYSPACE_VALUE_LIMIT / 2 - 1)}ab`;
      await ks.set(k, exact);
      expect(await ks.get(k)).toBe(exact);
      await expect(ks.set(k, `${exact}é`)).rejects.toBeInstanceOf(KeySpaceValueTooLarge);
      expect(ks.reachable).toBe(true);
    });

    it('after close, operations reject with KeySpaceError and reachable is false', async () => {
      const ks = await make();
      await ks.set(key('before-close'), 'x');
      await ks.close();
      expect(ks.reachable).toBe(false);
      await expect(ks.get(key('after-close'))).rejects.toBeInstanceOf(KeySpaceError);
      await expect(ks.set(key('after-close'), 'x')).rejects.toMatchObject({ code: 'keyspace_unavailable' });
      await ks.close(); // idempotent
    });
  });
}

describe('keyspace against redis-server and embedded', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  keySpaceContract('redis', async () => {
    const ks = new RedisKeySpace(redis.url);
    return ks;
  });
  keySpaceContract('embedded', async () => new EmbeddedKeySpace());

  // Only another writer of a shared Redis can hold a value over the bound (both keyspaces refuse to write one): a read
  // of it is refused after STRLEN, without its bytes crossing the connection, and every other command goes on.
  it('a value over the bound written by another Redis client is not read: get rejects naming the key and its size, once told', async () => {
    const direct = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    const told: KeySpaceValueTooLarge[] = [];
    // A generous command timeout: this test is about sizes, not a loaded machine's latency.
    const ks = new RedisKeySpace(redis.url, { commandTimeoutMs: 10_000, onValueTooLarge: (err) => told.push(err) });
    try {
      const big = key('planted');
      const size = 64 * 1024 * 1024;
      await direct.setrange(big, size - 1, 'x');
      for (let i = 0; i < 3; i++) {
        const err = await ks.get(big).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(KeySpaceValueTooLarge);
        expect((err as Error).message).toBe(`the key '${big}' holds 64 MiB, over the 1 MiB a node reads: ignored`);
      }
      expect(told).toHaveLength(1);
      expect(ks.reachable).toBe(true);
      const other = key('other');
      await ks.set(other, 'fine');
      expect(await ks.get(other)).toBe('fine');
      expect(await ks.pttl(big)).toBe(-1);
      // A value of the bound exactly is read whole; one byte more is not.
      const edge = key('edge');
      await direct.setrange(edge, KEYSPACE_VALUE_LIMIT - 1, 'y');
      expect((await ks.get(edge))?.length).toBe(KEYSPACE_VALUE_LIMIT);
      await direct.append(edge, 'z');
      await expect(ks.get(edge)).rejects.toBeInstanceOf(KeySpaceValueTooLarge);
      expect(told.map((e) => e.key)).toEqual([big, edge]);
      await direct.del(big, edge);
    } finally {
      await ks.close();
      direct.disconnect();
    }
  });

  describe('redis outage', () => {
    const unhandled: unknown[] = [];
    const record = (err: unknown) => unhandled.push(err);
    beforeAll(() => {
      process.on('unhandledRejection', record);
      process.on('uncaughtException', record);
    });
    afterAll(() => {
      process.off('unhandledRejection', record);
      process.off('uncaughtException', record);
    });

    it('fails fast while Redis is down and recovers on the same port after a restart', async () => {
      const changes: boolean[] = [];
      const ks = new RedisKeySpace(redis.url, { onReachableChange: (ok) => changes.push(ok) });
      try {
        const k = key('outage');
        await ks.set(k, 'before');
        expect(ks.reachable).toBe(true);

        await redis.kill();
        expect(await eventually(async () => !ks.reachable, 2_000)).toBe(true);
        const started = Date.now();
        await expect(ks.get(k)).rejects.toBeInstanceOf(KeySpaceError);
        await expect(ks.set(k, 'during')).rejects.toBeInstanceOf(KeySpaceError);
        await expect(ks.pttl(k)).rejects.toMatchObject({ code: 'keyspace_unavailable' });
        await expect(ks.del(k)).rejects.toBeInstanceOf(KeySpaceError);
        expect(Date.now() - started).toBeLessThan(2_000);
        expect(ks.reachable).toBe(false);

        await redis.restart();
        // The backoff is capped at 5 s, so one full backoff step plus the connect is the bound.
        const back = await eventually(
          async () => {
            try {
              await ks.set(k, 'after');
              return true;
            } catch (err) {
              expect(err).toBeInstanceOf(KeySpaceError);
              return false;
            }
          },
          8_000,
          100,
        );
        expect(back).toBe(true);
        expect(ks.reachable).toBe(true);
        expect(await ks.get(k)).toBe('after'); // the restarted server is empty: this is the new write
        expect(changes).toEqual([true, false, true]);
        expect(unhandled).toEqual([]);
      } finally {
        await ks.close();
      }
    });

    it('a keyspace created while Redis is down rejects fast, then connects once Redis is up', async () => {
      await redis.kill();
      const ks = new RedisKeySpace(redis.url);
      try {
        const started = Date.now();
        await expect(ks.get(key('down'))).rejects.toBeInstanceOf(KeySpaceError);
        expect(Date.now() - started).toBeLessThan(2_000);
        expect(ks.reachable).toBe(false);
        await redis.restart();
        expect(await ks.waitReachable(8_000)).toBe(true);
        expect(await ks.pttl(key('up'))).toBe(-2);
        expect(unhandled).toEqual([]);
      } finally {
        await ks.close();
      }
    });
  });
});

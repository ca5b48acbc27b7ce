import { Redis } from 'ioredis';
import {
  KEYSPACE_VALUE_LIMIT,
  type KeySpace,
  KeySpaceError,
  KeySpaceValueTooLarge,
  tooLargeReporter,
  valueBytes,
} from './keyspace';
import { normalizeTtlMs } from './ttl';

export interface RedisKeySpaceOptions {
  /** A command without a reply after this long rejects (default 1000 ms). */
  commandTimeoutMs?: number;
  /** A connection attempt that has not completed after this long is abandoned and retried (default 2000 ms). */
  connectTimeoutMs?: number;
  /** First reconnect delay (default 100 ms); doubles per failed attempt up to `maxBackoffMs` (default 5000 ms). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Called on every change of `reachable` (not on every repeated connection error), e.g. to log it once. */
  onReachableChange?: (reachable: boolean, detail: string) => void;
  /** The most of one value read or written, in bytes (default `KEYSPACE_VALUE_LIMIT`). */
  valueLimit?: number;
  /** Told once per key and size of a value over the bound that a read refused (log it). */
  onValueTooLarge?: (err: KeySpaceValueTooLarge) => void;
}

/** Reconnect delay before attempt `attempt` (1-based): min·2^(attempt−1), capped at max. Reconnects never stop. */
export function backoffDelayMs(attempt: number, minMs = 100, maxMs = 5000): number {
  const exp = Math.min(Math.max(attempt, 1) - 1, 30);
  return Math.min(minMs * 2 ** exp, maxMs);
}

/** `redis://user:secret@host` → `redis://user:***@host`, for logs and self-test details. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable redis url)';
  }
}

/**
 * The keyspace over Redis (ioredis). While Redis is down commands fail fast with a KeySpaceError instead of queueing
 * (no offline queue, in-flight commands time out, nothing is resent after a reconnect: a caller already told its
 * write failed must not see it land later). The client reconnects forever with capped exponential backoff, and
 * connection errors never reach the process as unhandled 'error' events.
 *
 * Operations issued during the very first connection attempt wait for it (bounded by the connect timeout), so a
 * keyspace used right after construction works when Redis is up; later outages are never waited on.
 */
export class RedisKeySpace implements KeySpace {
  readonly kind = 'redis' as const;
  readonly url: string;
  private readonly client: Redis;
  private ok = false;
  private closed = false;
  private firstAttempt: Promise<void> | null;
  private readonly onReachableChange?: (reachable: boolean, detail: string) => void;
  readonly valueLimit: number;
  private readonly tooLarge: (err: KeySpaceValueTooLarge) => void;

  constructor(url: string, opts: RedisKeySpaceOptions = {}) {
    this.url = url;
    this.valueLimit = opts.valueLimit ?? KEYSPACE_VALUE_LIMIT;
    this.tooLarge = tooLargeReporter(opts.onValueTooLarge);
    this.onReachableChange = opts.onReachableChange;
    const minMs = opts.minBackoffMs ?? 100;
    const maxMs = opts.maxBackoffMs ?? 5000;
    const connectTimeout = opts.connectTimeoutMs ?? 2000;
    this.client = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout: opts.commandTimeoutMs ?? 1000,
      connectTimeout,
      retryStrategy: (attempt) => backoffDelayMs(attempt, minMs, maxMs),
      lazyConnect: false,
    });
    this.client.on('ready', () => this.mark(true, 'connected'));
    this.client.on('error', (err: Error) => this.mark(false, err.message));
    this.client.on('close', () => this.mark(false, 'connection closed'));
    this.client.on('end', () => this.mark(false, 'connection ended'));
    let settle = () => {};
    this.firstAttempt = new Promise<void>((resolve) => (settle = resolve));
    const timer = setTimeout(() => settle(), connectTimeout + 100);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      this.firstAttempt = null;
      settle();
    };
    this.client.once('ready', done);
    this.client.once('close', done);
    this.client.once('end', done);
  }

  get reachable(): boolean {
    return this.ok && !this.closed;
  }

  /** Resolves true once connected, false after `timeoutMs` without a connection (or when closed). */
  waitReachable(timeoutMs = 5000): Promise<boolean> {
    if (this.reachable) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (value: boolean) => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        resolve(value);
      };
      const onReady = () => finish(true);
      const timer = setTimeout(() => finish(this.reachable), timeoutMs);
      this.client.on('ready', onReady);
    });
  }

  /**
   * EXISTS, STRLEN and at most the bound's bytes of the value (GETRANGE), in one transaction: a value over the bound
   * never crosses the connection, so it cannot hold up the commands behind it.
   */
  async get(key: string): Promise<string | null> {
    const limit = this.valueLimit;
    const [exists, bytes, head] = await this.run(async () => {
      const replies = await this.client
        .multi()
        .exists(key)
        .strlen(key)
        .getrange(key, 0, limit - 1)
        .exec();
      if (!replies) throw new Error('transaction aborted');
      for (const [err] of replies) if (err) throw err;
      return replies.map(([, v]) => v) as [number, number, string];
    });
    if (!exists) return null;
    if (bytes > limit) {
      const err = new KeySpaceValueTooLarge(key, bytes, limit);
      this.tooLarge(err);
      throw err;
    }
    return head;
  }

  async set(key: string, value: string, opts: { ttlMs?: number } = {}): Promise<void> {
    const ttl = normalizeTtlMs(opts.ttlMs);
    const bytes = valueBytes(value);
    if (bytes > this.valueLimit) throw new KeySpaceValueTooLarge(key, bytes, this.valueLimit);
    // A plain SET drops any TTL the key had, which is the contract for a set without ttlMs.
    await this.run(() => (ttl === undefined ? this.client.set(key, value) : this.client.set(key, value, 'PX', ttl)));
  }

  async del(key: string): Promise<void> {
    await this.run(() => this.client.del(key));
  }

  async pttl(key: string): Promise<number> {
    return this.run(() => this.client.pttl(key));
  }

  /** QUIT when connected (pending replies arrive first), otherwise drop the socket and stop reconnecting. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.client.status === 'ready') {
      try {
        await withTimeout(this.client.quit(), 1000);
        return;
      } catch {
        // fall through to a hard disconnect
      }
    }
    this.client.disconnect(false);
  }

  private async run<T>(op: () => Promise<T>): Promise<T> {
    if (this.closed) throw new KeySpaceError('redis keyspace is closed');
    if (this.firstAttempt) await this.firstAttempt;
    try {
      const result = await op();
      this.mark(true, 'command answered');
      return result;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // A Redis error reply (e.g. WRONGTYPE) means the server answered: still reachable.
      if (!(err instanceof Error && err.name === 'ReplyError')) this.mark(false, message);
      throw new KeySpaceError(`redis: ${message}`, { cause: err });
    }
  }

  private mark(ok: boolean, detail: string): void {
    if (ok && this.client.status !== 'ready') return;
    if (this.ok === ok) return;
    this.ok = ok;
    this.onReachableChange?.(ok, detail);
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e: unknown) => (clearTimeout(timer), reject(e)),
    );
  });
}

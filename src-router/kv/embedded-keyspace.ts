import {
  KEYSPACE_VALUE_LIMIT,
  type KeySpace,
  KeySpaceError,
  KeySpaceValueTooLarge,
  tooLargeReporter,
  valueBytes,
} from './keyspace';
import { normalizeTtlMs } from './ttl';

export interface EmbeddedKeySpaceOptions {
  /** Clock in ms (default `Date.now`). Expiry is judged against it on every read, so tests can move time by hand. */
  now?: () => number;
  /** How often expired entries are dropped in the background (default 30 s; the timer is unref'd). 0 disables it. */
  sweepIntervalMs?: number;
  /** The most of one value read or written, in UTF-8 bytes (default `KEYSPACE_VALUE_LIMIT`). */
  valueLimit?: number;
  /** Told once per key and size of a value over the bound that a read refused (log it). */
  onValueTooLarge?: (err: KeySpaceValueTooLarge) => void;
}

interface Entry {
  value: string;
  /** Epoch ms at which the key is gone; undefined = no TTL. */
  expiresAt?: number;
}

/**
 * In-process keyspace with the same semantics as the Redis one (Redis PTTL codes included). Expiry is decided on
 * read, so a key is never visible after its deadline even between sweeps; the sweep only frees memory.
 * After `close()` every operation rejects with a KeySpaceError and `reachable` is false, as with a quit client.
 */
export class EmbeddedKeySpace implements KeySpace {
  readonly kind = 'embedded' as const;
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private sweepTimer?: NodeJS.Timeout;
  private closed = false;
  readonly valueLimit: number;
  private readonly tooLarge: (err: KeySpaceValueTooLarge) => void;

  constructor(opts: EmbeddedKeySpaceOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.valueLimit = opts.valueLimit ?? KEYSPACE_VALUE_LIMIT;
    this.tooLarge = tooLargeReporter(opts.onValueTooLarge);
    const every = opts.sweepIntervalMs ?? 30_000;
    if (every > 0) {
      this.sweepTimer = setInterval(() => this.sweep(), every);
      this.sweepTimer.unref();
    }
  }

  get reachable(): boolean {
    return !this.closed;
  }

  /** Always true while open: there is nothing to connect to. */
  async waitReachable(): Promise<boolean> {
    return !this.closed;
  }

  async get(key: string): Promise<string | null> {
    const entry = this.live(key);
    if (!entry) return null;
    const bytes = valueBytes(entry.value);
    if (bytes > this.valueLimit) {
      const err = new KeySpaceValueTooLarge(key, bytes, this.valueLimit);
      this.tooLarge(err);
      throw err;
    }
    return entry.value;
  }

  async set(key: string, value: string, opts: { ttlMs?: number } = {}): Promise<void> {
    const ttl = normalizeTtlMs(opts.ttlMs);
    this.open();
    const bytes = valueBytes(value);
    if (bytes > this.valueLimit) throw new KeySpaceValueTooLarge(key, bytes, this.valueLimit);
    this.entries.set(key, ttl === undefined ? { value } : { value, expiresAt: this.now() + ttl });
  }

  async del(key: string): Promise<void> {
    this.open();
    this.entries.delete(key);
  }

  async pttl(key: string): Promise<number> {
    const entry = this.live(key);
    if (!entry) return -2;
    if (entry.expiresAt === undefined) return -1;
    return entry.expiresAt - this.now();
  }

  /** Drops every expired entry; returns how many went. */
  sweep(): number {
    const now = this.now();
    let dropped = 0;
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt !== undefined && entry.expiresAt <= now) {
        this.entries.delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  /** Number of stored entries, expired-but-unswept ones included (for tests of the sweep). */
  get size(): number {
    return this.entries.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    this.entries.clear();
  }

  private open(): void {
    if (this.closed) throw new KeySpaceError('embedded keyspace is closed');
  }

  private live(key: string): Entry | undefined {
    this.open();
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}

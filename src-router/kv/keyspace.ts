/**
 * The keyspace port (design.md §2): string keys and values with optional TTL. Two implementations with
 * identical semantics — Redis through ioredis when `redis.url` is set, embedded (in-process) otherwise.
 * Operations reject with a KeySpaceError when the backing store cannot answer; callers decide what that means
 * (routing keeps its last applied strategy and reports not reporting).
 */
export interface KeySpace {
  readonly kind: 'redis' | 'embedded';
  /**
   * The value, or null when the key does not exist. A value over the keyspace's bound (`KEYSPACE_VALUE_LIMIT`) is
   * not read: it rejects with `KeySpaceValueTooLarge`, and the keyspace stays usable for every other command.
   */
  get(key: string): Promise<string | null>;
  /**
   * Sets the value; with `ttlMs` the key disappears after that many milliseconds, without it any TTL is cleared.
   * A value over the bound is refused (`KeySpaceValueTooLarge`), so a node never writes what no node would read.
   */
  set(key: string, value: string, opts?: { ttlMs?: number }): Promise<void>;
  del(key: string): Promise<void>;
  /** Remaining time to live in ms; -1 when the key has no TTL; -2 when it does not exist (Redis PTTL semantics). */
  pttl(key: string): Promise<number>;
  /** Whether the last operation or connection check succeeded. */
  readonly reachable: boolean;
  close(): Promise<void>;
}

export class KeySpaceError extends Error {
  readonly code = 'keyspace_unavailable';
}

/**
 * The most of one value a node reads from the keyspace (or writes to it): the routing key, its effective beacon and
 * the runtime blob are a few KiB; anyone who can write the keyspace could make one of them hundreds of MiB.
 */
export const KEYSPACE_VALUE_LIMIT = 1024 * 1024;

/** A value over the bound: not read (or not written); the key is treated as holding nothing usable. */
export class KeySpaceValueTooLarge extends Error {
  readonly code = 'keyspace_value_too_large';

  constructor(
    readonly key: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`the key '${key}' holds ${byteText(bytes)}, over the ${byteText(limit)} a node reads: ignored`);
    this.name = 'KeySpaceValueTooLarge';
  }
}

/** Bytes as an operator reads them (whole KiB or MiB when they are). */
function byteText(bytes: number): string {
  const MiB = 1024 * 1024;
  if (bytes >= MiB) return `${Number((bytes / MiB).toFixed(1))} MiB`;
  if (bytes >= 1024) return `${Number((bytes / 1024).toFixed(1))} KiB`;
  return `${bytes} bytes`;
}

/** The size of a value as the keyspace stores it: UTF-8 bytes. */
export const valueBytes = (value: string): number => Buffer.byteLength(value, 'utf8');

/**
 * Reports a refused value once per key and size, so a key polled every few seconds is logged once (and again when
 * its size changes). Only the node's own few keys are read; the memo is emptied past 64 keys all the same.
 */
export function tooLargeReporter(report?: (err: KeySpaceValueTooLarge) => void): (err: KeySpaceValueTooLarge) => void {
  const seen = new Map<string, number>();
  return (err) => {
    if (seen.get(err.key) === err.bytes) return;
    if (seen.size >= 64) seen.clear();
    seen.set(err.key, err.bytes);
    report?.(err);
  };
}

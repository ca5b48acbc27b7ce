/**
 * The keyspace port (design.md §2): string keys and values with optional TTL. Two implementations with
 * identical semantics — Redis through ioredis when `redis.url` is set, embedded (in-process) otherwise.
 * Operations reject with a KeySpaceError when the backing store cannot answer; callers decide what that means
 * (routing keeps its last applied strategy and reports not reporting).
 */
export interface KeySpace {
  readonly kind: 'redis' | 'embedded';
  get(key: string): Promise<string | null>;
  /** Sets the value; with `ttlMs` the key disappears after that many milliseconds, without it any TTL is cleared. */
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

/**
 * TTL argument rules shared by both keyspace implementations, so they refuse the same inputs the same way:
 * a TTL must be a finite number above zero; fractions round up to whole milliseconds (Redis `PX` takes integers).
 */
export function normalizeTtlMs(ttlMs: number | undefined): number | undefined {
  if (ttlMs === undefined) return undefined;
  if (!Number.isFinite(ttlMs) || ttlMs <= 0)
    throw new RangeError(`ttlMs must be a finite number above 0, got ${ttlMs}`);
  return Math.ceil(ttlMs);
}

/**
 * Absent stays absent (RT-2): drops keys whose value is undefined, null or a non-finite number (which JSON would
 * turn into null), and answers undefined when nothing is left, so an object with nothing measured is left out
 * of the blob instead of being published as `{}`.
 */
export function compact<T extends object>(obj: T): T | undefined {
  const out: Partial<T> = {};
  let kept = 0;
  for (const k of Object.keys(obj) as (keyof T)[]) {
    const v = obj[k];
    if (v === undefined || v === null) continue;
    if (typeof v === 'number' && !Number.isFinite(v)) continue;
    out[k] = v;
    kept++;
  }
  return kept ? (out as T) : undefined;
}

/** A finite number within [min, max], else undefined: an out-of-range reading is dropped, not published. */
export function inRange(n: number | undefined, min: number, max = Number.POSITIVE_INFINITY): number | undefined {
  return n !== undefined && Number.isFinite(n) && n >= min && n <= max ? n : undefined;
}

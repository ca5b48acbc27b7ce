/** The JSON kind of a value: null, array, or its typeof. */
export const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * Every key of `actual` exists in `reference` with a value of the same kind, recursively (arrays: by their first
 * item); the problems as `path: what`. Run it both ways for the same keys on both sides.
 */
export function shapeProblems(actual: unknown, reference: unknown, at = '$'): string[] {
  if (kind(actual) !== kind(reference)) return [`${at}: ${kind(actual)}, reference has ${kind(reference)}`];
  if (Array.isArray(actual))
    return actual.length && (reference as unknown[]).length
      ? shapeProblems(actual[0], (reference as unknown[])[0], `${at}[0]`)
      : [];
  if (kind(actual) !== 'object') return [];
  const ref = reference as Record<string, unknown>;
  return Object.entries(actual as Record<string, unknown>).flatMap(([k, v]) =>
    k in ref ? shapeProblems(v, ref[k], `${at}.${k}`) : [`${at}.${k}: not in the reference`],
  );
}

/** The metric names and types a Prometheus text declares (`# TYPE name type`), sorted. */
export const metricTypes = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('# TYPE '))
    .map((l) => l.slice(7))
    .sort();

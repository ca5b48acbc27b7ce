/**
 * The `multi:` routing spec (ROUTE-3), shared by the router and the console: comma-separated `name:weight` pairs,
 * each split at its LAST colon; the first problem wins, in the order of the seed's table, with these messages.
 * Plain functions, no imports: the renderer validates before publishing exactly as the router validates on receipt.
 */

export const MULTI_PREFIX = 'multi:';
export const DEFAULT_MULTI_SPEC = 'multi:least-request:3,least-kv-cache:1';
const EXAMPLE_PAIR = 'least-request:3';

export const MULTI_MESSAGES = {
  empty: 'Enter at least one name:weight pair.',
  emptyEntry: 'Remove the empty entry and separate pairs with single commas.',
  notPair: (entry: string) => `"${entry}" is not a name:weight pair (for example ${EXAMPLE_PAIR}).`,
  notWeightable: (name: string, weightable: readonly string[]) =>
    `"${name}" is not weightable. Weightable scorers: ${weightable.join(', ')}.`,
  weight: (name: string) => `The weight of "${name}" must be a number above zero.`,
} as const;

export interface WeightedPair {
  name: string;
  weight: number;
}

export type MultiPairsResult = { ok: true; pairs: WeightedPair[]; spec: string } | { ok: false; message: string };

/** The pairs of a spec (`multi:` prefix optional), or the first problem. `spec` is the text to publish: trimmed, prefixed. */
export function parseMultiPairs(text: string, multiScorers: readonly string[]): MultiPairsResult {
  const trimmed = text.trim();
  const body =
    trimmed === 'multi' ? '' : trimmed.startsWith(MULTI_PREFIX) ? trimmed.slice(MULTI_PREFIX.length) : trimmed;
  if (!body.trim()) return { ok: false, message: MULTI_MESSAGES.empty };
  const pairs: WeightedPair[] = [];
  for (const raw of body.split(',')) {
    const entry = raw.trim();
    if (!entry) return { ok: false, message: MULTI_MESSAGES.emptyEntry };
    const at = entry.lastIndexOf(':');
    const name = at < 0 ? '' : entry.slice(0, at).trim();
    const weightText = at < 0 ? '' : entry.slice(at + 1).trim();
    if (!name || !weightText) return { ok: false, message: MULTI_MESSAGES.notPair(entry) };
    if (!multiScorers.includes(name)) return { ok: false, message: MULTI_MESSAGES.notWeightable(name, multiScorers) };
    const weight = Number(weightText);
    if (!Number.isFinite(weight) || weight <= 0) return { ok: false, message: MULTI_MESSAGES.weight(name) };
    pairs.push({ name, weight });
  }
  return { ok: true, pairs, spec: trimmed.startsWith(MULTI_PREFIX) ? trimmed : `${MULTI_PREFIX}${trimmed}` };
}

/** Whether a strategy string is a multi spec (what the router treats as one). */
export const isMultiSpec = (strategy: string): boolean => {
  const t = strategy.trim();
  return t === 'multi' || t.startsWith(MULTI_PREFIX);
};

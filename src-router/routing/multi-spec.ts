import { isScorerName, MULTI_SCORERS, type WeightedScorer } from './scorers';
import type { ParsedStrategy, StrategyInfo } from './strategies';

/**
 * The `multi:` spec (ROUTE-3): comma-separated `name:weight` pairs, each split at its LAST colon. Validation
 * answers the first problem, in the order of the seed's table, with these messages.
 */

export const DEFAULT_MULTI_SPEC = 'multi:least-request:3,least-kv-cache:1';
export const MULTI_PREFIX = 'multi:';
const EXAMPLE_PAIR = 'least-request:3';

export const MULTI_MESSAGES = {
  empty: 'Enter at least one name:weight pair.',
  emptyEntry: 'Remove the empty entry and separate pairs with single commas.',
  notPair: (entry: string) => `"${entry}" is not a name:weight pair (for example ${EXAMPLE_PAIR}).`,
  notWeightable: (name: string, weightable: readonly string[]) => `"${name}" is not weightable. Weightable scorers: ${weightable.join(', ')}.`,
  weight: (name: string) => `The weight of "${name}" must be a number above zero.`,
} as const;

export type MultiSpecResult = { ok: true; scorers: WeightedScorer[] } | { ok: false; message: string };

/** Parses `multi:name:weight,...` (the `multi:` prefix is optional here). */
export function parseMultiSpec(spec: string, multiScorers: readonly string[] = MULTI_SCORERS): MultiSpecResult {
  const trimmed = spec.trim();
  const body = trimmed === 'multi' ? '' : trimmed.startsWith(MULTI_PREFIX) ? trimmed.slice(MULTI_PREFIX.length) : trimmed;
  if (!body.trim()) return { ok: false, message: MULTI_MESSAGES.empty };
  const scorers: WeightedScorer[] = [];
  for (const raw of body.split(',')) {
    const entry = raw.trim();
    if (!entry) return { ok: false, message: MULTI_MESSAGES.emptyEntry };
    const at = entry.lastIndexOf(':');
    const name = at < 0 ? '' : entry.slice(0, at).trim();
    const weightText = at < 0 ? '' : entry.slice(at + 1).trim();
    if (!name || !weightText) return { ok: false, message: MULTI_MESSAGES.notPair(entry) };
    if (!multiScorers.includes(name) || !isScorerName(name)) return { ok: false, message: MULTI_MESSAGES.notWeightable(name, multiScorers) };
    const weight = Number(weightText);
    if (!Number.isFinite(weight) || weight <= 0) return { ok: false, message: MULTI_MESSAGES.weight(name) };
    scorers.push({ name, weight });
  }
  return { ok: true, scorers };
}

export const STRATEGY_MESSAGES = {
  empty: 'Choose a routing strategy.',
  unknown: (name: string, known: readonly string[]) => `Unknown routing strategy "${name}". Known strategies: ${known.join(', ')}.`,
} as const;

export type StrategyResult = { ok: true; strategy: ParsedStrategy } | { ok: false; message: string };

/** Validates a whole strategy string as setRouting receives it: a strategy name, or a `multi:` spec. */
export function validateStrategy(spec: string, strategies: readonly StrategyInfo[]): StrategyResult {
  const text = spec.trim();
  if (!text) return { ok: false, message: STRATEGY_MESSAGES.empty };
  const multi = strategies.find((s) => s.name === 'multi');
  if (multi && (text === 'multi' || text.startsWith(MULTI_PREFIX))) {
    const weightable = strategies.filter((s) => s.weightable).map((s) => s.name);
    const parsed = parseMultiSpec(text, weightable);
    return parsed.ok ? { ok: true, strategy: { spec: text, name: 'multi', scorers: parsed.scorers } } : parsed;
  }
  const info = strategies.find((s) => s.name === text && s.name !== 'multi');
  if (!info) return { ok: false, message: STRATEGY_MESSAGES.unknown(text, strategies.map((s) => (s.name === 'multi' ? `${MULTI_PREFIX}name:weight,…` : s.name))) };
  const name = info.name;
  return { ok: true, strategy: { spec: text, name, scorers: isScorerName(name) && name !== 'prefix-affinity' ? [{ name, weight: 1 }] : [] } };
}

import { DEFAULT_MULTI_SPEC, MULTI_MESSAGES, MULTI_PREFIX, parseMultiPairs } from '../contract/multi-spec';
import { isScorerName, MULTI_SCORERS, type WeightedScorer } from './scorers';
import type { ParsedStrategy, StrategyInfo } from './strategies';

/** The router's side of the `multi:` spec (ROUTE-3): the parsing itself is shared with the console (contract). */

export { DEFAULT_MULTI_SPEC, MULTI_MESSAGES, MULTI_PREFIX };

export type MultiSpecResult = { ok: true; scorers: WeightedScorer[] } | { ok: false; message: string };

/** Parses `multi:name:weight,...` (the `multi:` prefix is optional here) into the router's weighted scorers. */
export function parseMultiSpec(spec: string, multiScorers: readonly string[] = MULTI_SCORERS): MultiSpecResult {
  const parsed = parseMultiPairs(spec, multiScorers.filter(isScorerName));
  if (!parsed.ok) return parsed;
  return { ok: true, scorers: parsed.pairs.map((p) => ({ name: p.name as WeightedScorer['name'], weight: p.weight })) };
}

export const STRATEGY_MESSAGES = {
  empty: 'Choose a routing strategy.',
  unknown: (name: string, known: readonly string[]) =>
    `Unknown routing strategy "${name}". Known strategies: ${known.join(', ')}.`,
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
  if (!info)
    return {
      ok: false,
      message: STRATEGY_MESSAGES.unknown(
        text,
        strategies.map((s) => (s.name === 'multi' ? `${MULTI_PREFIX}name:weight,…` : s.name)),
      ),
    };
  const name = info.name;
  return {
    ok: true,
    strategy: {
      spec: text,
      name,
      scorers: isScorerName(name) && name !== 'prefix-affinity' ? [{ name, weight: 1 }] : [],
    },
  };
}

import type { DecisionRowWire } from '../../../src-router/contract';
import { type Folded, foldDecisionRows } from '../../../src-router/contract/decision-fold';

/** Repeated decisions folded into one line of the Lending tab (UI-1): the router's own fold, from the contract. */
export type FoldedDecision = Folded<DecisionRowWire>;

export const foldDecisions = (
  rows: readonly DecisionRowWire[],
  opts: { adjacentOnly?: boolean } = {},
): FoldedDecision[] => foldDecisionRows(rows, opts);

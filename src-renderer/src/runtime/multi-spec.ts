/**
 * The `multi:` spec as the console parses it before publishing (ROUTE-3): the very parser the router uses,
 * from the shared contract, so the two answer the same, message for message.
 */
export {
  isMultiSpec,
  MULTI_MESSAGES,
  MULTI_PREFIX,
  type MultiPairsResult as MultiSpecCheck,
  parseMultiPairs as parseMultiSpec,
  type WeightedPair,
} from '../../../src-router/contract/multi-spec';

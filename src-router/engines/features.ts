import type { BackendFamily } from '../config';
import type { Endpoint } from './types';

/** Request parameters of a chat that only some engines honour: constrained output and function calling. */
export type ChatFeature = 'response_format' | 'tools';

/**
 * Which backend family honours which feature: llama-server and vLLM through their grammar / guided decoding, the
 * built-in llama-node engine through node-llama-cpp's grammars. The sim engine and KoboldCpp do not: a request that
 * needs one is refused (400) instead of being answered as if the parameter were not there.
 */
export const FAMILY_FEATURES: Record<BackendFamily, readonly ChatFeature[]> = {
  'llama-server': ['response_format', 'tools'],
  vllm: ['response_format', 'tools'],
  'llama-node': ['response_format', 'tools'],
  koboldcpp: [],
  sim: [],
  'sd-server': [],
  'whisper-server': [],
};

/** The features a chat body asks for: a `response_format` other than text, a non-empty `tools` list (or a `tool_choice` that needs one). */
export function requestedFeatures(endpoint: Endpoint, json: Record<string, unknown> | undefined): ChatFeature[] {
  if (endpoint !== 'chat' || !json) return [];
  const out: ChatFeature[] = [];
  const format = json.response_format as { type?: unknown } | null | undefined;
  if (format && typeof format === 'object' && format.type !== 'text') out.push('response_format');
  const tools = Array.isArray(json.tools) && json.tools.length > 0;
  if (tools && json.tool_choice !== 'none') out.push('tools');
  return out;
}

/**
 * The first feature `backend` does not honour among those the body asks for; undefined when it honours them all.
 * Backends that are not a family of this node (a static route's endpoint, whose engine is not known) pass everything on.
 */
export function unhonouredFeature(
  backend: string,
  endpoint: Endpoint,
  json: Record<string, unknown> | undefined,
): ChatFeature | undefined {
  const honoured = (FAMILY_FEATURES as Record<string, readonly ChatFeature[] | undefined>)[backend];
  if (!honoured) return undefined;
  return requestedFeatures(endpoint, json).find((f) => !honoured.includes(f));
}

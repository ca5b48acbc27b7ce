import { type Endpoint, unhonouredFeature } from '../engines';
import type { Target } from '../registry';
import { RouterError } from './errors';

/**
 * Refuses a request that asks for constrained output or function calling from an engine that cannot honour it
 * (engines/features.ts decides per backend family): a clear 400 naming the parameter, never an answer that ignored it.
 */
export function refuseUnhonoured(target: Target, endpoint: Endpoint, json: Record<string, unknown> | undefined): void {
  const feature = unhonouredFeature(target.backend, endpoint, json);
  if (!feature) return;
  const what = feature === 'tools' ? 'function calling (tools)' : 'constrained output (response_format)';
  throw new RouterError(
    400,
    'unsupported_parameter',
    `${feature}: the model '${target.clusterId}' runs on a ${target.backend} engine, which cannot honour ${what}; llama-server, vllm and llama-node engines can`,
    'invalid_request_error',
    feature,
  );
}

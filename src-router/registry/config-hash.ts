import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import type { ModelConfig } from '../config';

/** Canonical JSON: object keys sorted, undefined dropped; the same config always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/**
 * Config hash (ID-1): sha256 of the canonical parsed config. The weights path is reduced to its file name,
 * so the same config on two machines with different folders hashes the same; the weights themselves are the model hash.
 */
export function configHash(config: ModelConfig): string {
  const forHash = { ...config, model: config.model ? basename(config.model) : undefined };
  return createHash('sha256').update(canonicalJson(forHash)).digest('hex');
}

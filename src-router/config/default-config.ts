import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { stringify } from 'yaml';
import type { NodeConfigInput } from './node-config';

/**
 * The embedded defaults of a node that has no config yet (`npm run serve`, the desktop app's first launch):
 * standalone, embedded keyspace, the store and a models folder next to the config file.
 */
export function defaultNodeConfig(port: number, nodeId = 'local'): NodeConfigInput {
  return {
    server: { host: '127.0.0.1', port },
    cluster: { role: 'standalone', node_id: nodeId, store_dir: './store' },
    models: { config_dir: './models' },
  };
}

/** Writes `config` to `file` unless it exists (never overwrites what an operator edited); true when written. */
export function writeNodeConfigIfMissing(file: string, config: NodeConfigInput, header: string): boolean {
  if (existsSync(file)) return false;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${header}${stringify(config)}`, { mode: 0o600 });
  return true;
}

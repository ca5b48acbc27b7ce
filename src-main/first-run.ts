import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { defaultNodeConfig, writeNodeConfigIfMissing } from '../src-router/config/default-config';
import type { ConfigPathChoice } from './config-path';

export interface DesktopConfig {
  path: string;
  /** This launch wrote it (the first launch). */
  created: boolean;
  /** Where model configs go: the Models screen says so while it is empty. */
  modelsDir: string;
}

/**
 * The desktop app's first launch. With no `--config` and no `ROUTERDESK_CONFIG`, the app writes a default
 * node config into its user-data folder (standalone, embedded keyspace, the store and a models folder beside it) and
 * starts on it. A config the operator named must exist: a clear error, never a default written elsewhere.
 */
export function ensureDesktopConfig(choice: ConfigPathChoice, port = 8080): DesktopConfig {
  if (choice.source !== 'default') {
    if (!existsSync(choice.path))
      throw new Error(
        `the node config ${choice.path} (from ${choice.source === 'argument' ? '--config' : 'ROUTERDESK_CONFIG'}) does not exist`,
      );
    return { path: choice.path, created: false, modelsDir: '' };
  }
  const dir = join(choice.path, '..');
  const modelsDir = join(dir, 'models');
  mkdirSync(modelsDir, { recursive: true });
  const created = writeNodeConfigIfMissing(
    choice.path,
    defaultNodeConfig(port),
    '# Routerdesk desktop node config, written on first launch; the Settings screen edits it\n',
  );
  return { path: choice.path, created, modelsDir };
}

import { join, resolve } from 'node:path';

/** Where the node config comes from: `--config <file>` / `--config=<file>`, then `ROUTERDESK_CONFIG`, then `<userData>/node.yaml`. */
export interface ConfigPathChoice {
  path: string;
  source: 'argument' | 'environment' | 'default';
}

export function resolveConfigPath(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  userDataDir: string,
): ConfigPathChoice {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg.startsWith('--config=')) return { path: resolve(arg.slice('--config='.length)), source: 'argument' };
    if (arg === '--config' && argv[i + 1]) return { path: resolve(argv[i + 1]), source: 'argument' };
  }
  if (env.ROUTERDESK_CONFIG) return { path: resolve(env.ROUTERDESK_CONFIG), source: 'environment' };
  return { path: join(userDataDir, 'node.yaml'), source: 'default' };
}

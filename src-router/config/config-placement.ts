import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { NodeConfig } from './node-config';

/** The real path of `p`'s deepest existing ancestor joined with the rest (`p` need not exist). */
function realish(p: string): string {
  const rest: string[] = [];
  for (let cur = p; ; ) {
    try {
      return join(realpathSync(cur), ...rest.reverse());
    } catch {
      const parent = dirname(cur);
      if (parent === cur) return p;
      rest.push(cur.slice(parent.length).replace(/^[\\/]+/, ''));
      cur = parent;
    }
  }
}

const within = (dir: string, p: string) => {
  const r = relative(dir, p);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
};

/**
 * Where the node config file may not lie: in `models.shared_dir`, the folder every cluster member may list and
 * download by hash — the config holds the tokens, and its writer makes a backup and temporaries beside it. Checked by
 * the path as written and by real path (a symlinked folder or file). Returns the issue at the field, if any.
 */
export function configPlacementIssues(config: NodeConfig, file: string): { path: string; message: string }[] {
  const shared = config.models.shared_dir;
  if (!shared) return [];
  const configFile = resolve(file);
  const held =
    within(resolve(shared), configFile) ||
    within(realish(resolve(shared)), realish(configFile)) ||
    within(realish(resolve(shared)), realish(dirname(configFile)));
  if (!held) return [];
  return [
    {
      path: 'models.shared_dir',
      message: `the folder ${shared} holds the node config file ${configFile}, whose tokens every cluster member could download as an asset: choose a folder without it (a subfolder such as ${join(shared, 'shared')})`,
    },
  ];
}

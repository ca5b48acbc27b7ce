import { ConfigError } from './load';
import { isPlaceholderToken, type NodeConfig } from './node-config';

/** Start-up checks of the cluster role (ROLE-2, ROLE-3): a clear refusal instead of a half-working node. */
export function checkRole(config: NodeConfig): void {
  const c = config.cluster;
  const problems: { path: string; message: string }[] = [];
  if (c.role !== 'standalone' && isPlaceholderToken(c.token)) {
    problems.push({
      path: 'cluster.token',
      message: `a ${c.role} needs the cluster's shared token; "${c.token}" is empty, a placeholder or shorter than 8 characters`,
    });
  }
  if (c.role === 'slave') {
    if (!c.master_url) problems.push({ path: 'cluster.master_url', message: 'a slave needs the URL of its master' });
    if (!c.public_url)
      problems.push({
        path: 'cluster.public_url',
        message: 'a slave needs its own reachable URL for the master to call',
      });
  }
  if (problems.length)
    throw new ConfigError(
      `cannot start as ${c.role}:\n${problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')}`,
      problems,
    );
}

/**
 * What a node config needs to start, checked before a new config is written (the Settings screen): its folders exist
 * (or can be made) and can be read, the files it names can be read, and the port it asks for can be bound. Each
 * problem names the config field it comes from, so the console shows it at that field. What these checks cannot see
 * (another process taking the port meanwhile, a store a newer build wrote) still fails the start itself.
 */
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { clientApiKeys } from './load';
import type { NodeConfig } from './node-config';

export interface BootIssue {
  /** The config field, e.g. `models.config_dir`. */
  path: string;
  message: string;
}

/** Where the running node listens: its own port is free for the next start. */
export interface OwnAddress {
  host: string;
  port: number;
}

const errno = (err: unknown) => (err as NodeJS.ErrnoException).code ?? '';
const reason = (err: unknown) => {
  const code = errno(err);
  if (code === 'ENOENT') return 'does not exist';
  if (code === 'EACCES' || code === 'EPERM') return 'cannot be read by this node (permission denied)';
  if (code === 'ENOTDIR') return 'is not a folder';
  return (err as Error).message;
};

/** A folder the node reads: it exists, is a folder, and its entries can be listed. */
function readableFolder(dir: string): string | null {
  try {
    if (!statSync(dir).isDirectory()) return `${dir} is not a folder`;
    readdirSync(dir);
    accessSync(dir, constants.R_OK | constants.X_OK);
    return null;
  } catch (err) {
    return `${dir} ${reason(err)}`;
  }
}

/** The store folder: an existing one is written to; a missing one is made under a folder that can be written. */
function writableStore(dir: string): string | null {
  let at = dir;
  for (;;) {
    try {
      if (!statSync(at).isDirectory()) return `${at} is not a folder`;
      accessSync(at, constants.R_OK | constants.W_OK | constants.X_OK);
      return null;
    } catch (err) {
      const code = errno(err);
      if (code === 'ENOENT' && dirname(at) !== at) {
        at = dirname(at);
        continue;
      }
      if (code === 'EACCES' || code === 'EPERM') return `${at} cannot be written by this node (permission denied)`;
      return `${at} ${reason(err)}`;
    }
  }
}

/** Binds `host:port` for a moment: null when it can be used, else why not and which field is at fault. */
export function bindIssue(host: string, port: number): Promise<BootIssue | null> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', (err) => {
      const code = errno(err);
      if (code === 'EADDRINUSE')
        resolve({ path: 'server.port', message: `port ${port} on ${host} is in use by another process` });
      else if (code === 'EACCES')
        resolve({ path: 'server.port', message: `port ${port} needs privileges this node does not have` });
      else
        resolve({
          path: 'server.host',
          message: `cannot listen on ${host}: ${code || (err as Error).message} (not an address of this machine?)`,
        });
    });
    srv.listen(port, host, () => srv.close(() => resolve(null)));
  });
}

/**
 * Every problem that would stop `config` from starting, by field: the models folder (an invalid model config in it is
 * not one: the start skips that file and lists its error), the shared folder, the store folder, the API keys file, the listen address. `own` is where the running node listens:
 * that port (or port 0, which keeps it) counts as free.
 */
export async function bootIssues(config: NodeConfig, own: OwnAddress): Promise<BootIssue[]> {
  const issues: BootIssue[] = [];
  const { config_dir: modelsDir, shared_dir: sharedDir } = config.models;
  if (modelsDir) {
    const folder = readableFolder(modelsDir);
    if (folder) issues.push({ path: 'models.config_dir', message: `the models folder ${folder}` });
  }
  if (sharedDir) {
    const folder = readableFolder(sharedDir);
    if (folder) issues.push({ path: 'models.shared_dir', message: `the shared folder ${folder}` });
  }
  const store = writableStore(config.cluster.store_dir);
  if (store) issues.push({ path: 'cluster.store_dir', message: `the store folder: ${store}` });
  if (config.server.api_keys_file) {
    try {
      clientApiKeys(config);
    } catch (err) {
      issues.push({ path: 'server.api_keys_file', message: (err as Error).message });
    }
  }
  const port = config.server.port || own.port;
  if (port !== own.port) {
    const bind = await bindIssue(config.server.host, port);
    if (bind) issues.push(bind);
  } else if (config.server.host !== own.host) {
    // The node's own port, on another address: the address must be one this machine has.
    const bind = await bindIssue(config.server.host, 0);
    if (bind) issues.push(bind);
  }
  return issues;
}

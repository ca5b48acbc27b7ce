/** Where built engines live and how a build is named: pure, so the naming is unit-tested. */
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The engines that `routerdesk engines build` makes from sources the npm packages ship. */
export const BUILDABLE = ['llama-server', 'whisper-server'] as const;
export type BuildableEngine = (typeof BUILDABLE)[number];

export const isBuildable = (name: string): name is BuildableEngine => (BUILDABLE as readonly string[]).includes(name);

/** `${XDG_CACHE_HOME:-~/.cache}/routerdesk/engines`: one folder per built engine and key. */
export function enginesCacheRoot(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  const base = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.startsWith('/') ? env.XDG_CACHE_HOME : join(home, '.cache');
  return join(base, 'routerdesk', 'engines');
}

/** Eight hex digits of SHA-256 over the flags in order: a different flag set is a different build. */
export function flagsHash(flags: readonly string[]): string {
  return createHash('sha256').update(flags.join('\n')).digest('hex').slice(0, 8);
}

/** The cache key of one build: the source's identity (a commit, shortened, or a package version) and the flags' hash. */
export function buildKey(source: string, flags: readonly string[]): string {
  const id = /^[0-9a-f]{40}$/.test(source) ? source.slice(0, 12) : source.replace(/[^A-Za-z0-9._-]/g, '_');
  if (!id) throw new Error('a build key needs a source identity');
  return `${id}-${flagsHash(flags)}`;
}

/** The folder name of a build: `<engine>-<key>`. */
export const buildFolderName = (engine: BuildableEngine, key: string) => `${engine}-${key}`;

/** Whether a cache entry's folder name belongs to `engine` (and is not a lock or an unfinished temp folder). */
export function isBuildFolderOf(engine: BuildableEngine, folder: string): boolean {
  return folder.startsWith(`${engine}-`) && !folder.endsWith('.lock') && !folder.startsWith('.');
}

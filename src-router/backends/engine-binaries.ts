/**
 * Which binary each external engine family runs on this machine: the one on PATH first, else (llama-server,
 * whisper-server) the newest build in the engines cache. The decisions are pure (`decideEngine`, `pickCachedBuild`);
 * `describeEngines` probes `--version` (bounded) and keeps the answer a few seconds so repeated calls spawn nothing.
 */
import { accessSync, constants, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { EngineFamily, EngineInfo } from '../contract/engines';
import { readBuildRecord } from './engine-build/build-engine';
import { type BuildableEngine, enginesCacheRoot, isBuildable, isBuildFolderOf } from './engine-build/cache-key';
import { probeVersion, type VersionProbe } from './engine-build/version-probe';
import { engineEnv } from './engine-env';

type ExternalFamily = Exclude<EngineFamily, 'llama-node' | 'sim'>;

/** Each external family's binary and where to get it when it is missing. */
export const EXTERNAL_ENGINES: Record<ExternalFamily, { binary: string; howToGet: string }> = {
  'llama-server': { binary: 'llama-server', howToGet: 'routerdesk engines build --only llama-server' },
  'whisper-server': { binary: 'whisper-server', howToGet: 'routerdesk engines build --only whisper-server' },
  'sd-server': {
    binary: 'sd-server',
    howToGet: 'https://github.com/leejet/stable-diffusion.cpp (build sd-server, put it on PATH)',
  },
  koboldcpp: {
    binary: 'koboldcpp',
    howToGet: 'https://github.com/LostRuins/koboldcpp (put the koboldcpp binary on PATH)',
  },
  vllm: { binary: 'vllm', howToGet: 'https://github.com/vllm-project/vllm (pip install vllm; needs a GPU)' },
};

export const ENGINE_FAMILIES: readonly EngineFamily[] = [
  'llama-server',
  'whisper-server',
  'sd-server',
  'koboldcpp',
  'vllm',
  'llama-node',
  'sim',
];

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` in the folders of `path` (a PATH value), or null. */
export function whichOnPath(name: string, path: string, isExec: (file: string) => boolean = executable): string | null {
  for (const dir of path.split(delimiter)) {
    if (!dir.startsWith('/')) continue; // a relative PATH entry would depend on the engine's working folder
    const file = join(dir, name);
    if (isExec(file)) return file;
  }
  return null;
}

export interface CachedBuild {
  folder: string;
  binary: string;
  key: string;
  builtAt: string;
  version: string | null;
}

/** Of the finished builds of one engine, the newest (by built_at; the folder name breaks ties). */
export function pickCachedBuild(builds: readonly CachedBuild[]): CachedBuild | null {
  let best: CachedBuild | null = null;
  for (const b of builds) {
    if (!best || b.builtAt > best.builtAt || (b.builtAt === best.builtAt && b.folder > best.folder)) best = b;
  }
  return best;
}

/** The finished builds of `engine` in the cache (folders with a build.json and the binary). */
export function cachedBuilds(engine: BuildableEngine, root = enginesCacheRoot()): CachedBuild[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const builds: CachedBuild[] = [];
  for (const name of names) {
    if (!isBuildFolderOf(engine, name)) continue;
    const folder = join(root, name);
    const record = readBuildRecord(folder, engine);
    if (record && executable(join(folder, 'bin', engine))) {
      builds.push({
        folder,
        binary: join(folder, 'bin', engine),
        key: record.key,
        builtAt: record.built_at,
        version: record.version,
      });
    }
  }
  return builds;
}

/** The newest finished build of `engine` in the cache, or null. */
export const findCachedBuild = (engine: BuildableEngine, root = enginesCacheRoot()) =>
  pickCachedBuild(cachedBuilds(engine, root));

export interface Located {
  path: string;
  foundIn: 'path' | 'cache';
  /** The build record's version, for a cached build. */
  recordedVersion: string | null;
}

/** Where an external family's binary is: on PATH, else (buildable engines) in the cache; null when nowhere. */
export function locateEngine(
  family: ExternalFamily,
  path = process.env.PATH ?? '',
  cacheRoot = enginesCacheRoot(),
): Located | null {
  const { binary } = EXTERNAL_ENGINES[family];
  const onPath = whichOnPath(binary, path);
  if (onPath) return { path: onPath, foundIn: 'path', recordedVersion: null };
  if (!isBuildable(binary)) return null;
  const built = findCachedBuild(binary, cacheRoot);
  return built ? { path: built.binary, foundIn: 'cache', recordedVersion: built.version } : null;
}

/** The answer for one family from what was found and what `--version` said. Pure. */
export function decideEngine(family: EngineFamily, located: Located | null, probe: VersionProbe | null): EngineInfo {
  if (family === 'llama-node' || family === 'sim') {
    return {
      family,
      binary: null,
      available: true,
      path: null,
      version: null,
      found_in: 'builtin',
      reason: null,
      how_to_get: null,
    };
  }
  const { binary, howToGet } = EXTERNAL_ENGINES[family];
  if (!located) {
    const where = isBuildable(binary) ? 'not on PATH and not built' : 'not on PATH';
    return {
      family,
      binary,
      available: false,
      path: null,
      version: null,
      found_in: null,
      reason: `${binary} ${where}`,
      how_to_get: howToGet,
    };
  }
  if (probe?.error) {
    return {
      family,
      binary,
      available: false,
      path: located.path,
      version: null,
      found_in: located.foundIn,
      reason: `${located.path} does not run: ${probe.error}`,
      how_to_get: howToGet,
    };
  }
  return {
    family,
    binary,
    available: true,
    path: located.path,
    version: probe?.version ?? located.recordedVersion,
    found_in: located.foundIn,
    reason: null,
    how_to_get: null,
  };
}

const PROBE_TTL_MS = 5000;
let cached: { at: number; key: string; answer: Promise<EngineInfo[]> } | null = null;

/** Every family, with what this machine would run for it; probed at most once per few seconds for the same PATH and cache. */
export function describeEngines(path = process.env.PATH ?? '', cacheRoot = enginesCacheRoot()): Promise<EngineInfo[]> {
  const key = `${path}\0${cacheRoot}`;
  if (cached && cached.key === key && Date.now() - cached.at < PROBE_TTL_MS) return cached.answer;
  const answer = Promise.all(
    ENGINE_FAMILIES.map(async (family) => {
      if (family === 'llama-node' || family === 'sim') return decideEngine(family, null, null);
      const located = locateEngine(family, path, cacheRoot);
      // The binary is asked in the environment an engine gets, so a Python engine (vLLM) finds its interpreter.
      return decideEngine(
        family,
        located,
        located ? await probeVersion(located.path, { ...engineEnv(process.env), PATH: path }) : null,
      );
    }),
  );
  cached = { at: Date.now(), key, answer };
  return answer;
}

/**
 * The program an engine command's first word runs: a bare `llama-server` / `whisper-server` that is not on PATH is the
 * newest cached build; anything else (a path, another name, nothing built) stays as written.
 */
export function resolveEngineCommand(
  word: string,
  path = process.env.PATH ?? '',
  cacheRoot = enginesCacheRoot(),
): string {
  if (word.includes('/') || !isBuildable(word)) return word;
  if (whichOnPath(word, path)) return word;
  return findCachedBuild(word, cacheRoot)?.binary ?? word;
}

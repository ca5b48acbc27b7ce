/**
 * How each buildable engine is made: where its source comes from (a file of an installed npm package), how that source
 * is identified for the cache key, and the cmake flags and target. CPU only, static, no web UI, no curl, no OpenSSL.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../paths';
import type { BuildableEngine } from './cache-key';

export interface EngineRecipe {
  engine: BuildableEngine;
  /** The binary the build leaves in `build/bin/`. */
  binary: string;
  /** What the source is, for build.json and the progress lines. */
  describe(): string;
  /** The version to record when the binary prints none for `--version` (whisper-server has no such flag). */
  fallbackVersion(): string | null;
  /** The source's identity: a commit or a package version. Throws naming what is missing. */
  sourceId(): string;
  /** The source folder to configure (cloned into `workDir` when it comes as a bundle). Null: a clone step is needed first. */
  sourceDir: string | null;
  /** A git bundle to clone into the work folder, when the source comes as one. */
  bundle: string | null;
  cmakeFlags: readonly string[];
  target: string;
}

const COMMON_FLAGS = ['-DCMAKE_BUILD_TYPE=Release', '-DBUILD_SHARED_LIBS=OFF', '-DGGML_NATIVE=ON'];

export const LLAMA_SERVER_FLAGS = [
  ...COMMON_FLAGS,
  '-DLLAMA_BUILD_UI=OFF',
  '-DLLAMA_USE_PREBUILT_UI=OFF',
  '-DLLAMA_BUILD_APP=OFF',
  '-DLLAMA_BUILD_TESTS=OFF',
  '-DLLAMA_BUILD_EXAMPLES=OFF',
  '-DLLAMA_OPENSSL=OFF',
  '-DLLAMA_CURL=OFF',
] as const;

export const WHISPER_SERVER_FLAGS = [
  ...COMMON_FLAGS,
  '-DWHISPER_BUILD_TESTS=OFF',
  '-DWHISPER_BUILD_EXAMPLES=ON',
  '-DWHISPER_BUILD_SERVER=ON',
  '-DWHISPER_SDL2=OFF',
  '-DWHISPER_CURL=OFF',
  '-DWHISPER_FFMPEG=OFF',
] as const;

/** node-llama-cpp's folder of llama.cpp sources: `gitRelease.bundle` and `llama.cpp.info.json`. */
export const llamaSourceFolder = (root = projectRoot()) =>
  join(root, 'resources', 'llama-runtime', 'node_modules', 'node-llama-cpp', 'llama');

/** nodejs-whisper's package folder; whisper.cpp's source is `cpp/whisper.cpp/` in it. */
export const whisperPackageFolder = (root = projectRoot()) => join(root, 'node_modules', 'nodejs-whisper');

function llamaRecipe(root: string): EngineRecipe {
  const folder = llamaSourceFolder(root);
  const bundle = join(folder, 'gitRelease.bundle');
  const tag = (): string => {
    try {
      return (
        (JSON.parse(readFileSync(join(folder, 'llama.cpp.info.json'), 'utf8')) as { tag?: string }).tag ?? 'unknown tag'
      );
    } catch {
      return 'unknown tag';
    }
  };
  return {
    engine: 'llama-server',
    binary: 'llama-server',
    describe: () => `llama.cpp ${tag()} (${bundle})`,
    fallbackVersion: () => `llama.cpp ${tag()}`,
    sourceId() {
      if (!existsSync(bundle))
        throw new Error(
          `llama.cpp's source bundle is missing: ${bundle} (npm ci installs it with resources/llama-runtime)`,
        );
      // The bundle's HEAD commit, read without cloning: `<sha> HEAD` is one of its lines.
      const heads = execFileSync('git', ['bundle', 'list-heads', bundle], { encoding: 'utf8', timeout: 60_000 });
      const head = heads.split('\n').find((l) => / HEAD$/.test(l)) ?? heads.split('\n')[0] ?? '';
      const sha = head.split(' ')[0] ?? '';
      if (!/^[0-9a-f]{40}$/.test(sha)) throw new Error(`cannot read the commit of ${bundle}`);
      return sha;
    },
    sourceDir: null,
    bundle,
    cmakeFlags: LLAMA_SERVER_FLAGS,
    target: 'llama-server',
  };
}

function whisperRecipe(root: string): EngineRecipe {
  const pkg = whisperPackageFolder(root);
  const version = (): string => {
    try {
      return (JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version?: string }).version ?? '';
    } catch {
      return '';
    }
  };
  const src = join(pkg, 'cpp', 'whisper.cpp');
  return {
    engine: 'whisper-server',
    binary: 'whisper-server',
    describe: () => `whisper.cpp from nodejs-whisper ${version() || '?'} (${src})`,
    fallbackVersion() {
      // whisper.cpp's own version, from `project("whisper.cpp" VERSION x.y.z)` in its CMakeLists.txt.
      let project = '';
      try {
        project =
          /project\("whisper\.cpp" VERSION ([\d.]+)\)/.exec(readFileSync(join(src, 'CMakeLists.txt'), 'utf8'))?.[1] ??
          '';
      } catch {
        /* no CMakeLists: the package version alone */
      }
      return `whisper.cpp ${project || '?'} (nodejs-whisper ${version() || '?'})`;
    },
    sourceId() {
      const v = version();
      if (!v || !existsSync(join(src, 'CMakeLists.txt')))
        throw new Error(
          `whisper.cpp's source is missing: ${src} (the npm package nodejs-whisper, installed by npm ci)`,
        );
      return `nodejs-whisper-${v}`;
    },
    sourceDir: src,
    bundle: null,
    cmakeFlags: WHISPER_SERVER_FLAGS,
    target: 'whisper-server',
  };
}

export function recipeFor(engine: BuildableEngine, root = projectRoot()): EngineRecipe {
  return engine === 'llama-server' ? llamaRecipe(root) : whisperRecipe(root);
}

/**
 * Builds one engine into the cache: in a temp folder beside the cache entry, renamed into place only when the binary
 * runs, so a killed build never looks finished; under a lock, so concurrent callers wait and then reuse the build.
 */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { ensureDebianTool, findOnPath } from '../../debian-tool';
import { ROUTER_VERSION } from '../../version';
import { takeBuildLock } from './build-lock';
import { type BuildableEngine, buildFolderName, buildKey, enginesCacheRoot } from './cache-key';
import { type EngineRecipe, recipeFor } from './recipes';
import { probeVersion } from './version-probe';

export type BuildStep = 'clone' | 'configure' | 'compile' | 'install';

/** What build.json in a cache entry records. */
export interface BuildRecord {
  engine: BuildableEngine;
  source: string;
  source_id: string;
  key: string;
  flags: string[];
  target: string;
  seconds: number;
  steps: { step: BuildStep; seconds: number }[];
  built_at: string;
  version: string | null;
  built_by: string;
}

export interface BuildResult {
  engine: BuildableEngine;
  /** Absolute path of the built binary. */
  binary: string;
  folder: string;
  key: string;
  reused: boolean;
  record: BuildRecord;
}

export interface BuildOptions {
  cacheRoot?: string;
  /** A progress line (no newline). */
  progress?: (line: string) => void;
  jobs?: number;
  /** How long to wait for another process's build of the same engine and key. */
  lockTimeoutMs?: number;
}

const STEP_TIMEOUT_MS: Record<BuildStep, number> = {
  clone: 10 * 60_000,
  configure: 10 * 60_000,
  compile: 120 * 60_000,
  install: 60_000,
};
const BUILD_FILE = 'build.json';

/** The build record of a finished cache entry, or null when the folder is not one (missing, unfinished, unreadable). */
export function readBuildRecord(folder: string, binary: string): BuildRecord | null {
  try {
    const record = JSON.parse(readFileSync(join(folder, BUILD_FILE), 'utf8')) as BuildRecord;
    return existsSync(join(folder, 'bin', binary)) ? record : null;
  } catch {
    return null;
  }
}

/** cmake, make and a C++ compiler (and git for a bundled source): found, else installed from Debian's packages as root, else an error naming the command. */
export function ensureBuildTools(recipe: EngineRecipe): void {
  const tool = (name: string, pkg: string) =>
    ensureDebianTool(`${name} (to build ${recipe.engine})`, pkg, () => findOnPath(name));
  if (recipe.bundle) tool('git', 'git');
  tool('cmake', 'cmake');
  tool('make', 'make');
  tool('g++', 'g++');
}

function run(command: string, args: string[], cwd: string, logFile: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const fd = openSync(logFile, 'a');
    const child = spawn(command, args, { cwd, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${command}: ${err.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `${command} ${args.slice(0, 3).join(' ')} … failed (${signal ? `signal ${signal}` : `exit code ${code}`})`,
          ),
        );
    });
  });
}

function logTail(logFile: string, lines = 25): string {
  try {
    return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

const seconds = (fromMs: number) => Math.round((Date.now() - fromMs) / 100) / 10;

/** Builds `engine` unless the cache already holds the build for its current source and flags. */
export async function buildEngine(engine: BuildableEngine, opts: BuildOptions = {}): Promise<BuildResult> {
  const recipe = recipeFor(engine);
  const progress = opts.progress ?? (() => {});
  const root = opts.cacheRoot ?? enginesCacheRoot();
  // A bundled source is identified with git (`git bundle list-heads`), so git comes first.
  if (recipe.bundle) ensureDebianTool(`git (to build ${engine})`, 'git', () => findOnPath('git'));
  const sourceId = recipe.sourceId();
  const key = buildKey(sourceId, recipe.cmakeFlags);
  const folder = join(root, buildFolderName(engine, key));
  const reuse = (): BuildResult | null => {
    const record = readBuildRecord(folder, recipe.binary);
    return record ? { engine, binary: join(folder, 'bin', recipe.binary), folder, key, reused: true, record } : null;
  };
  const cached = reuse();
  if (cached) return cached;

  mkdirSync(root, { recursive: true });
  const release = await takeBuildLock(
    join(root, `${buildFolderName(engine, key)}.lock`),
    opts.lockTimeoutMs ?? 150 * 60_000,
    (pid) => progress(`${engine}: another build of ${key} is running (pid ${pid}); waiting for it`),
  );
  try {
    const built = reuse();
    if (built) return built;
    ensureBuildTools(recipe);
    // Temp folders of this engine and key left by a killed build: ours now, since we hold the lock.
    const tmpPrefix = `.tmp-${buildFolderName(engine, key)}-`;
    for (const name of readdirSync(root))
      if (name.startsWith(tmpPrefix)) rmSync(join(root, name), { recursive: true, force: true });
    const tmp = join(root, `${tmpPrefix}${process.pid}`);
    const out = join(tmp, 'out');
    mkdirSync(join(out, 'bin'), { recursive: true });
    const log = join(out, 'build.log');
    const started = Date.now();
    const steps: BuildRecord['steps'] = [];
    const step = async (name: BuildStep, work: () => Promise<void>) => {
      const t = Date.now();
      progress(`${engine}: ${name} …`);
      try {
        await work();
      } catch (err) {
        const tail = logTail(log);
        throw new Error(`${engine}: ${name} failed: ${(err as Error).message}\nlog: ${log}${tail ? `\n${tail}` : ''}`);
      }
      steps.push({ step: name, seconds: seconds(t) });
      progress(`${engine}: ${name} done in ${seconds(t)} s`);
    };
    let src = recipe.sourceDir;
    if (recipe.bundle) {
      const clone = join(tmp, 'src');
      await step('clone', async () => {
        await run('git', ['clone', '--quiet', recipe.bundle!, clone], tmp, log, STEP_TIMEOUT_MS.clone);
        await run('git', ['-C', clone, 'checkout', '--quiet', sourceId], tmp, log, STEP_TIMEOUT_MS.clone);
      });
      src = clone;
    }
    const buildDir = join(tmp, 'build');
    await step('configure', () =>
      run('cmake', ['-S', src!, '-B', buildDir, ...recipe.cmakeFlags], tmp, log, STEP_TIMEOUT_MS.configure),
    );
    const jobs = opts.jobs ?? availableParallelism();
    await step('compile', () =>
      run(
        'cmake',
        ['--build', buildDir, '--target', recipe.target, '-j', String(jobs)],
        tmp,
        log,
        STEP_TIMEOUT_MS.compile,
      ),
    );
    let version: string | null = null;
    await step('install', async () => {
      const target = join(out, 'bin', recipe.binary);
      copyFileSync(join(buildDir, 'bin', recipe.binary), target);
      chmodSync(target, 0o755);
      const probe = await probeVersion(target);
      if (probe.error) throw new Error(`the built binary does not run: ${probe.error}`);
      version = probe.version ?? recipe.fallbackVersion();
    });
    const record: BuildRecord = {
      engine,
      source: recipe.describe(),
      source_id: sourceId,
      key,
      flags: [...recipe.cmakeFlags],
      target: recipe.target,
      seconds: seconds(started),
      steps,
      built_at: new Date().toISOString(),
      version,
      built_by: `routerdesk ${ROUTER_VERSION}`,
    };
    writeFileSync(join(out, BUILD_FILE), `${JSON.stringify(record, null, 2)}\n`);
    rmSync(folder, { recursive: true, force: true });
    renameSync(out, folder);
    rmSync(tmp, { recursive: true, force: true });
    return { engine, binary: join(folder, 'bin', recipe.binary), folder, key, reused: false, record };
  } finally {
    release();
  }
}

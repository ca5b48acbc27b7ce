import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from './node-harness';

/**
 * The real engines the tests run: llama-server and whisper-server built by `routerdesk engines build` (cached in
 * `~/.cache/routerdesk/engines/`, so only the first run on a machine builds; concurrent test files wait for each
 * other through the build's lock) and a tiny whisper model the project generates. A machine that cannot build
 * (no cmake / g++ and not root on Debian) fails with the command to run; never skipped.
 */
export interface RealEngines {
  llamaServer: string;
  whisperServer: string;
  /** A tiny whisper.cpp model (seed 1), generated for this test process. */
  whisperModel: string;
}

/** How long a caller's `beforeAll` should allow: a first build of both engines takes about 10 minutes on 2 free cores, far longer on busy ones. */
export const REAL_ENGINES_TIMEOUT_MS = 90 * 60_000;

const HINT = 'npm run build && node out/main/cli.js engines build (or: npm run engines)';

let pending: Promise<RealEngines> | null = null;

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    // Progress lines (clone, configure, compile, install) go through to the test output as they come.
    child.stderr.on('data', (d) => {
      stderr += d;
      process.stderr.write(d);
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `engines build --json` (all, or `only`), failing with the command to run; the engines' absolute paths. */
async function build(only?: 'whisper-server'): Promise<(engine: string) => string> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const built = await run(['engines', 'build', '--json', ...(only ? ['--only', only] : [])]);
  if (built.code !== 0)
    throw new Error(
      `routerdesk engines build failed (exit ${built.code}): ${built.stderr.trim().split('\n').slice(-12).join('\n')}\nRun: ${HINT}`,
    );
  const { builds } = JSON.parse(built.stdout) as { builds: { engine: string; binary: string }[] };
  const binary = (engine: string) => {
    const b = builds.find((x) => x.engine === engine)?.binary;
    if (!b || !existsSync(b)) throw new Error(`engines build reported no ${engine}. Run: ${HINT}`);
    return b;
  };
  return binary;
}

/** A tiny whisper model for this test process (generated in under a second), so it always matches the writer being tested. */
async function tinyWhisperModel(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'routerdesk-whisper-model-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const whisperModel = join(dir, 'tiny-whisper-seed1.bin');
  const made = await run(['make-whisper-model', whisperModel, '--seed', '1']);
  if (made.code !== 0) throw new Error(`routerdesk make-whisper-model failed: ${made.stderr}`);
  return whisperModel;
}

async function buildAll(): Promise<RealEngines> {
  const binary = await build();
  return {
    llamaServer: binary('llama-server'),
    whisperServer: binary('whisper-server'),
    whisperModel: await tinyWhisperModel(),
  };
}

let pendingWhisper: Promise<{ whisperServer: string; whisperModel: string }> | null = null;

/** whisper-server alone (a smaller build than llama-server), for tests that need only transcription. */
export function realWhisperServer(): Promise<{ whisperServer: string; whisperModel: string }> {
  pendingWhisper ??= (async () => ({
    whisperServer: (await build('whisper-server'))('whisper-server'),
    whisperModel: await tinyWhisperModel(),
  }))().catch((err: unknown) => {
    pendingWhisper = null;
    throw err;
  });
  return pendingWhisper;
}

/** Builds (or reuses) both engines once per test process and returns absolute paths. */
export function realEngines(): Promise<RealEngines> {
  pending ??= buildAll().catch((err: unknown) => {
    pending = null;
    throw err;
  });
  return pending;
}

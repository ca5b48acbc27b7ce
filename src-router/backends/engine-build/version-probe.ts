/** `<binary> --version`, bounded: at most 5 s and 4 KB of output; a binary without the flag reports no version. */
import { spawn } from 'node:child_process';

export const VERSION_TIMEOUT_MS = 5000;
const OUTPUT_CAP = 4096;

/**
 * The version line(s) of `--version` output: the first two non-empty lines joined, at most 200 characters; null when
 * the binary does not know the flag (whisper-server prints its usage after "unknown argument") or printed nothing.
 */
export function versionSummary(output: string): string | null {
  if (/unknown argument|unrecognized option|invalid option|^usage:/im.test(output.slice(0, 400))) return null;
  const lines = output
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(0, 2);
  if (lines.length === 0) return null;
  return lines.join('; ').slice(0, 200);
}

/** Runs `file --version` with no stdin in `env` (an engine's environment), and summarises what it prints (stdout and stderr). */
export interface VersionProbe {
  version: string | null;
  /** Why the binary could not be run (not found, not loadable, crashed); null when it ran. */
  error: string | null;
  /** It ran but did not finish in time (a Python engine importing its world): it exists, its version is unknown. */
  timedOut?: boolean;
}

export function probeVersion(
  file: string,
  env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '' },
  timeoutMs = VERSION_TIMEOUT_MS,
): Promise<VersionProbe> {
  return new Promise((resolve) => {
    let out = '';
    let done = false;
    const finish = (error: string | null, timedOut = false) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(
        timedOut ? { version: null, error: null, timedOut } : { version: error ? null : versionSummary(out), error },
      );
    };
    // Its own process group, so a timeout ends the children it started too (they would hold the pipes open and keep
    // this process alive).
    const child = spawn(file, ['--version'], { stdio: ['ignore', 'pipe', 'pipe'], env, detached: true });
    const take = (d: Buffer) => {
      if (out.length < OUTPUT_CAP) out += d.toString('utf8').slice(0, OUTPUT_CAP - out.length);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = setTimeout(() => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      child.stdout.destroy();
      child.stderr.destroy();
      finish(null, true);
    }, timeoutMs);
    child.once('error', (err) => finish(`cannot run ${file}: ${err.message}`));
    // 126/127: the loader could not run it (a missing library, a wrong architecture); a signal: it crashed.
    child.once('close', (code, signal) => {
      if (signal) finish(`--version was killed by ${signal}`);
      else if (code === 126 || code === 127)
        finish(`--version exited with code ${code}: ${out.trim().split('\n')[0]?.slice(0, 200) ?? ''}`);
      else finish(null);
    });
  });
}

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
  const lines = output.split(/\r?\n/).map((l) => l.trim()).filter(Boolean).slice(0, 2);
  if (lines.length === 0) return null;
  return lines.join('; ').slice(0, 200);
}

/** Runs `file --version` with no stdin in `env` (an engine's environment), and summarises what it prints (stdout and stderr). */
export function probeVersion(file: string, env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '' }, timeoutMs = VERSION_TIMEOUT_MS): Promise<{ version: string | null; error: string | null }> {
  return new Promise((resolve) => {
    let out = '';
    let done = false;
    const finish = (error: string | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ version: error ? null : versionSummary(out), error });
    };
    const child = spawn(file, ['--version'], { stdio: ['ignore', 'pipe', 'pipe'], env });
    const take = (d: Buffer) => {
      if (out.length < OUTPUT_CAP) out += d.toString('utf8').slice(0, OUTPUT_CAP - out.length);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(`--version did not finish within ${timeoutMs / 1000} s`);
    }, timeoutMs);
    child.once('error', (err) => finish(`cannot run ${file}: ${err.message}`));
    // 126/127: the loader could not run it (a missing library, a wrong architecture); a signal: it crashed.
    child.once('close', (code, signal) => {
      if (signal) finish(`--version was killed by ${signal}`);
      else if (code === 126 || code === 127) finish(`--version exited with code ${code}: ${out.trim().split('\n')[0]?.slice(0, 200) ?? ''}`);
      else finish(null);
    });
  });
}

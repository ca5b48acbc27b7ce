/**
 * wrk as the load generator of the request-path measure: Debian's package (found, or installed as root on Debian, else the
 * bench fails with the command), one thread, POSTing one JSON body over kept-alive connections. A C client costs
 * next to nothing between requests, so one connection at a time shows what a proxy adds to a request, not what a
 * second Node process's wake-ups cost on a virtual machine.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { debianTool } from '../debian-tool';
import type { BenchScope } from './scope';

export interface WrkRun {
  requests: number;
  rps: number;
  /** Latency percentiles in ms (wrk's --latency). */
  p50Ms: number | null;
  p90Ms: number | null;
}

export const wrkBinary = () => debianTool('wrk', 'wrk', 'proxy-overhead measures the request path with it');

/** The Lua script that makes wrk POST `body` as JSON (written once per scope). */
export function wrkScript(scope: BenchScope, body: unknown): string {
  const file = join(scope.tempDir('routerdesk-bench-wrk-'), 'post.lua');
  const text = JSON.stringify(body);
  // A Lua long string holds any JSON that does not close it.
  if (text.includes(']==]')) throw new Error('a wrk body cannot hold ]==]');
  writeFileSync(
    file,
    `wrk.method = "POST"\nwrk.body = [==[${text}]==]\nwrk.headers["Content-Type"] = "application/json"\n`,
  );
  return file;
}

/** One wrk run; rejects when wrk fails or reports socket errors or non-2xx answers (a broken path is not a fast one). */
export function runWrk(
  bin: string,
  script: string,
  url: string,
  o: { connections: number; seconds: number },
): Promise<WrkRun> {
  const args = ['-t1', `-c${o.connections}`, `-d${o.seconds}s`, '--latency', '-s', script, url];
  return new Promise((resolve, reject) => {
    const p = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout!.on('data', (d) => (out += d));
    p.stderr!.on('data', (d) => (out += d));
    p.once('error', reject);
    p.once('close', (code) => {
      const run = parseWrk(out);
      if (code !== 0 || !run || run.requests === 0)
        return reject(new Error(`wrk ${args.join(' ')} failed (${code}):\n${out}`));
      if (/Socket errors|Non-2xx/.test(out)) return reject(new Error(`wrk saw errors on ${url}:\n${out}`));
      resolve(run);
    });
  });
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

/** wrk's report: `N requests in …`, `Requests/sec: X`, and the latency distribution's `50%  123.00us` lines. */
export function parseWrk(out: string): WrkRun | null {
  const requests = /(\d+) requests in /.exec(out);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  if (!requests || !rps) return null;
  const pct = (p: number) => {
    const m = new RegExp(`^\\s*${p}(?:\\.0+)?%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(out);
    return m ? Number(m[1]) * UNIT_MS[m[2]] : null;
  };
  return { requests: Number(requests[1]), rps: Number(rps[1]), p50Ms: pct(50), p90Ms: pct(90) };
}

/**
 * nginx as the proxy to beat: Debian's package, found on PATH or in the sbin folders; installed with
 * apt-get when missing on a Debian machine as root, otherwise the bench fails with the command to run. One worker,
 * keep-alive to the upstream, no buffering, on a loopback port; its folder a temp dir of the scope. It also serves as
 * the reference upstream that answers at once (a fixed JSON body) that wrk measures the request path against.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from '../backends/free-port';
import { debianTool } from '../debian-tool';
import type { BenchScope } from './scope';

export function nginxBinary(): string {
  return debianTool('nginx', 'nginx', 'proxy-overhead compares the router with it');
}

/**
 * What nginx does: `proxy_pass` to an upstream URL, or answer every request with a fixed body (JSON, or `type`: a
 * whole SSE stream as one body).
 */
export type NginxRole = string | { answer: string; type?: 'application/json' | 'text/event-stream' };

/** The longest answer nginx's `return` takes in its config (a longer one is served from a file, `ANSWER_FILE`). */
export const RETURN_LIMIT = 4_000;
/** The file in nginx's folder that holds a longer answer. */
export const ANSWER_FILE = 'answer';

/** An answering role whose body is served from `ANSWER_FILE` (too long for `return`). */
const fromFileRole = (role: NginxRole): boolean => typeof role !== 'string' && role.answer.length > RETURN_LIMIT;

/**
 * The nginx config: `proxy_pass` to `upstream` over kept-alive connections, nothing logged, nothing buffered; or
 * `return 200` with the given body (no `'`, `\\` or `$`: nginx would read them); a body longer than `RETURN_LIMIT`
 * (an embedding's answer) is the file `ANSWER_FILE` in `dir`, answered to a POST as well.
 */
export function nginxConfig(dir: string, port: number, role: NginxRole): string {
  if (typeof role !== 'string' && !fromFileRole(role) && /['\\$]/.test(role.answer))
    throw new Error("a reference answer for nginx cannot hold ', \\ or $");
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((t) => `  ${t}_temp_path ${join(dir, t)};`)
    .join('\n');
  return `worker_processes 1;
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
${temp}
${typeof role === 'string' ? proxied(port, new URL(role)) : fromFileRole(role) ? fromFile(port, dir, role.type ?? 'application/json') : answering(port, role.answer, role.type ?? 'application/json')}
}
`;
}

const proxied = (port: number, u: URL) => `  upstream engine { server ${u.hostname}:${u.port}; keepalive 128; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://engine;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }`;

// The answer's newlines (an SSE body's) stay as they are inside nginx's quoted string.
const answering = (port: number, answer: string, type: string) => `  server {
    listen 127.0.0.1:${port};
    location / {
      default_type ${type};
      return 200 '${answer}';
    }
  }`;

// nginx's static files refuse a POST (405): the error page, an internal GET of the same file, answers 200.
const fromFile = (port: number, dir: string, type: string) => `  server {
    listen 127.0.0.1:${port};
    location / {
      root ${dir};
      default_type ${type};
      rewrite ^ /${ANSWER_FILE} break;
      error_page 405 =200 $uri;
    }
  }`;

const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

/** Starts nginx in front of `upstream` (or answering itself); resolves with its URL once it accepts connections. Stopped with the scope. */
export async function startNginx(scope: BenchScope, upstream: NginxRole): Promise<{ url: string; pid: number }> {
  const bin = nginxBinary();
  const dir = scope.tempDir('routerdesk-bench-nginx-');
  for (const t of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, t), { recursive: true });
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig(dir, port, upstream));
  if (typeof upstream !== 'string' && fromFileRole(upstream)) {
    // nginx's worker runs as another user (nobody) when started as root: it must be able to read the file.
    // Set after writing: a strict umask would take the mode given to the write.
    const file = join(dir, ANSWER_FILE);
    writeFileSync(file, upstream.answer);
    chmodSync(file, 0o644);
    chmodSync(dir, 0o755);
  }
  let output = '';
  const proc = spawn(bin, ['-c', conf, '-p', dir, '-e', join(dir, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
  scope.adopt(proc);
  proc.stdout!.on('data', (d) => (output += d));
  proc.stderr!.on('data', (d) => (output += d));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`nginx exited with ${proc.exitCode}:\n${output}`);
    if (await answers(port)) return { url: `http://127.0.0.1:${port}`, pid: proc.pid! };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nginx did not listen on ${port} within 10 s:\n${output}`);
}

/**
 * nginx as the proxy to beat (issue #14): Debian's package, found on PATH or in the sbin folders; installed with
 * apt-get when missing on a Debian machine as root, otherwise the bench fails with the command to run. One worker,
 * keep-alive to the upstream, no buffering, on a loopback port; its folder a temp dir of the scope.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from '../backends/free-port';
import { findOnPath } from './redis';
import type { BenchScope } from './scope';

export const NGINX_INSTALL_HINT = 'apt-get install -y nginx';

export function nginxBinary(): string {
  const found = findOnPath('nginx');
  if (found) return found;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (root && existsSync('/etc/debian_version')) {
    const r = spawnSync('apt-get', ['install', '-y', 'nginx'], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    const after = r.status === 0 ? findOnPath('nginx') : null;
    if (after) return after;
  }
  throw new Error(`nginx is not installed (proxy-overhead compares the router with it). Run: ${NGINX_INSTALL_HINT}`);
}

/** The nginx config: `proxy_pass` to `upstream` over kept-alive connections, nothing logged, nothing buffered. */
export function nginxConfig(dir: string, port: number, upstream: string): string {
  const u = new URL(upstream);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${join(dir, t)};`).join('\n');
  return `worker_processes 1;
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
${temp}
  upstream engine { server ${u.hostname}:${u.port}; keepalive 128; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://engine;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
`;
}

const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

/** Starts nginx in front of `upstream`; resolves with its URL once it accepts connections. Stopped with the scope. */
export async function startNginx(scope: BenchScope, upstream: string): Promise<{ url: string; pid: number }> {
  const bin = nginxBinary();
  const dir = scope.tempDir('routerdesk-bench-nginx-');
  for (const t of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, t), { recursive: true });
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig(dir, port, upstream));
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

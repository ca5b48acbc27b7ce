import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../backends/free-port';
import { consoleAccessDir, writeLinkPage } from '../console-access';
import { consoleCodeSchema } from '../contract';
import { describeTinyLlama, writeTinyLlamaGguf } from '../engines/llama-node/gguf-writer';
import {
  DEMO_LINKS,
  DEMO_NODES,
  DEMO_PRELOADS,
  type DemoChild,
  type DemoNodeId,
  type DemoPorts,
  preloadModel,
  startDemoNode,
  stopChildren,
  writeDemoNode,
} from './demo-cluster';
import { DemoTraffic } from './demo-traffic';
import { openBrowser } from './open-browser';

/** The folder `routerdesk demo` uses when no `--dir` is given. */
export const DEFAULT_DEMO_DIR = '.routerdesk-demo';
const PERIOD_MS = 10_000;

/**
 * `routerdesk demo [--dir D] [--port N] [--no-open]`: a master and two slaves on loopback as separate
 * processes (`demo-cluster`), text and image links made through the master's site API, and a bursty traffic
 * generator (`demo-traffic`), so that within seconds the Lending tab shows live leases and the Nodes screen held and
 * lent requests. Prints the UI's URL with its console token. SIGINT/SIGTERM stop the traffic and every node it
 * started (SIGKILL for one that does not stop within 10 s; its engines die with it).
 */
export async function demoCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { dir: { type: 'string' }, port: { type: 'string' }, 'no-open': { type: 'boolean' } },
    strict: true,
  });
  const dir = resolve(values.dir ?? DEFAULT_DEMO_DIR);
  const wanted = values.port === undefined ? null : Number(values.port);
  if (wanted !== null && (!Number.isInteger(wanted) || wanted < 0 || wanted > 65535))
    throw new Error(`--port: not a port: ${values.port}`);

  const procs: ChildProcess[] = [];
  let traffic: DemoTraffic | null = null;
  let stopping: Promise<void> | null = null;
  const stop = (code: number) => {
    stopping ??= (async () => {
      const force = setTimeout(() => process.exit(1), 20_000);
      force.unref();
      await traffic?.stop();
      await stopChildren(procs);
      process.exit(code);
    })();
    return stopping;
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  const weights = join(dir, 'weights', 'tiny-chat.gguf');
  if (!existsSync(weights)) {
    mkdirSync(join(dir, 'weights'), { recursive: true });
    process.stdout.write(
      `${describeTinyLlama(await writeTinyLlamaGguf(weights, { embd: 128, layers: 2, type: 'f16', seed: 7 }))}\n`,
    );
  }
  const ports: DemoPorts = { master: await masterPort(wanted), 'gpu-a': await freePort(), 'gpu-b': await freePort() };
  const tokens = { cluster: randomBytes(18).toString('base64url'), console: randomBytes(18).toString('base64url') };
  let children: DemoChild[];
  try {
    const started = DEMO_NODES.map((id) =>
      startDemoNode(id, writeDemoNode(dir, id, ports, tokens), join(dir, id, 'node.log')),
    );
    procs.push(...started.map((s) => s.proc));
    children = await Promise.all(started.map((s) => s.child));
    const master = children[0].url;
    await untilTrue(() => clusterHealthy(master, tokens.console), 'the cluster to be healthy', 60_000);
    for (const link of DEMO_LINKS)
      await untilTrue(() => makeLink(master, tokens.console, link), `the ${link.lane} link`, 30_000);
  } catch (err) {
    process.stderr.write(`routerdesk demo: ${(err as Error).message}\n`);
    await stop(1);
    return;
  }
  const urls = Object.fromEntries(children.map((c) => [c.id, c.url])) as Record<DemoNodeId, string>;
  // gpu-b's image model, so it helps gpu-a's images from the first bursts on; not waited for (the load takes seconds).
  for (const p of DEMO_PRELOADS) {
    preloadModel(urls[p.node], tokens.cluster, p.localId).catch((err: Error) => {
      if (!stopping) process.stderr.write(`routerdesk demo: ${p.node}: ${err.message}\n`);
    });
  }
  traffic = new DemoTraffic(urls, { periodMs: PERIOD_MS, maxInFlight: 32, timeoutMs: 120_000 });
  traffic.start();
  const link = `${urls.master}/?token=${encodeURIComponent(tokens.console)}`;
  process.stdout.write(
    `\nRouterdesk demo cluster (folder ${dir})\n  UI:      ${link}\n` +
      `           a one-time link any time: routerdesk console-link --config ${join(dir, 'master', 'node.yaml')}\n` +
      children
        .map((c) => `  node ${c.id.padEnd(7)} pid ${c.proc.pid}  ${c.url}  (log: ${join(dir, c.id, 'node.log')})\n`)
        .join('') +
      `  links:   gpu-a/chat-7b → gpu-b/chat-7b (text), gpu-a/sd-1.5 → gpu-b/sd-1.5 (image)\n` +
      `  traffic: a burst every ${PERIOD_MS / 1000} s to gpu-a (chat-7b, sd-1.5) and the master (tiny-chat)\n` +
      `  Lending tab: live leases; Nodes: held and lent requests. Ctrl-C stops everything.\n`,
  );
  // The browser's command line (every local user sees it in `ps`) names an owner-only page holding a one-time code,
  // never the token nor the code itself.
  if (!values['no-open'] && (process.env.DISPLAY || process.env.WAYLAND_DISPLAY)) {
    await consoleCode(urls.master, tokens.console).then(
      (code) => openBrowser(writeLinkPage(consoleAccessDir(join(dir, 'master', 'store')), urls.master, code)),
      (err: Error) => process.stderr.write(`routerdesk demo: no browser opened: ${err.message}\n`),
    );
  }
}

/** A one-time code of the master's for the UI link. */
async function consoleCode(master: string, token: string): Promise<string> {
  const res = await fetch(`${master}/router/v1/console/codes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(5_000),
  });
  if (!res.ok) throw new Error(`the master answered HTTP ${res.status} for a one-time code`);
  return consoleCodeSchema.parse(await res.json()).code;
}

/** An explicit port (0: a free one); else 8080, or a free port when 8080 is taken. */
async function masterPort(wanted: number | null): Promise<number> {
  if (wanted !== null) return wanted === 0 ? freePort() : wanted;
  if (await portFree(8080)) return 8080;
  process.stdout.write('port 8080 is in use: the master serves on a free port instead (choose one with --port)\n');
  return freePort();
}

async function portFree(port: number): Promise<boolean> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

async function clusterHealthy(master: string, token: string): Promise<boolean> {
  const res = await fetch(`${master}/router/v1/console/cluster/nodes`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(3_000),
  });
  if (!res.ok) return false;
  const { nodes } = (await res.json()) as { nodes: { healthy: boolean }[] };
  return nodes.length === DEMO_NODES.length && nodes.every((n) => n.healthy);
}

/** Creates one link (201), or finds it made by an earlier run (409 duplicate_link); false while the catalog lacks a model. */
async function makeLink(master: string, token: string, link: (typeof DEMO_LINKS)[number]): Promise<boolean> {
  const path = link.lane === 'text' ? 'text-routing-groups' : 'routing-groups';
  const res = await fetch(`${master}/router/v1/site/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    signal: AbortSignal.timeout(5_000),
    body: JSON.stringify({
      owner: link.owner,
      helper: link.helper,
      acknowledge_different_weights: true,
      load_if_unloaded: true,
      restore_after_borrow: true,
    }),
  });
  const body = await res.text();
  if (res.status === 201 || res.status === 409) return true;
  if (res.status >= 500 || res.status === 401 || res.status === 403)
    throw new Error(`creating the ${link.lane} link: ${res.status} ${body}`);
  return false;
}

async function untilTrue(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = (err as Error).message;
      if (/link: (5\d\d|401|403)/.test(last)) throw err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

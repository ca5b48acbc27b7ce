/**
 * The cluster `routerdesk demo` runs: a master and two slaves, each a `routerdesk node` child process on
 * loopback, in folders under the demo folder (`master/`, `gpu-a/`, `gpu-b/`: node.yaml, models/, store/, node.log).
 * Their node configs are written at every start (ports and tokens are new each time); their stores are kept, so a
 * second run starts with the fits the first one measured.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { ModelConfigInput, NodeConfigInput } from '../config';
import { cliRef } from '../paths';

export const DEMO_NODES = ['master', 'gpu-a', 'gpu-b'] as const;
export type DemoNodeId = (typeof DEMO_NODES)[number];

/**
 * Models with the costs of real engines, as sim engines: a 7B chat model (load ~3 s; ~28 tokens/s on gpu-a, ~65 on
 * the faster gpu-b) and Stable Diffusion 1.5 (load ~4 s; 20 steps at 120 / 60 ms a step). The master serves the
 * built-in llama.cpp engine's tiny model generated at start. Same public IDs on both slaves, different configs: the
 * catalog shows `chat-7b` and `chat-7b-2` (ID-2).
 */
export const DEMO_MODELS: Record<DemoNodeId, Record<string, ModelConfigInput>> = {
  master: {
    'tiny-chat': {
      name: 'tiny-chat',
      backend: 'llama-node',
      capabilities: ['text'],
      model: '../../weights/tiny-chat.gguf',
      contextsize: 512,
      parallel: 1,
      llama_node: { threads: 1 },
    },
  },
  'gpu-a': {
    'chat-7b': {
      name: 'chat-7b',
      backend: 'sim',
      capabilities: ['text'],
      engine: 'llama.cpp',
      contextsize: 8192,
      parallel: 1,
      sim: { load_time: '3s', token_time: '35ms' },
    },
    'sd-1.5': {
      name: 'sd-1.5',
      backend: 'sim',
      capabilities: ['image'],
      engine: 'clutch-layers',
      sim: { load_time: '4s', step_time: '120ms' },
    },
  },
  'gpu-b': {
    'chat-7b': {
      name: 'chat-7b',
      backend: 'sim',
      capabilities: ['text'],
      engine: 'llama.cpp',
      contextsize: 8192,
      parallel: 1,
      sim: { load_time: '3s', token_time: '15ms' },
    },
    'sd-1.5': {
      name: 'sd-1.5',
      backend: 'sim',
      capabilities: ['image'],
      engine: 'clutch-layers',
      sim: { load_time: '4s', step_time: '60ms' },
    },
  },
};

/** The links the demo makes through the site API: gpu-a lends its backlog to the faster gpu-b, text and image. */
export const DEMO_LINKS = [
  { lane: 'text', owner: { node_id: 'gpu-a', model: 'chat-7b' }, helper: { node_id: 'gpu-b', model: 'chat-7b' } },
  { lane: 'image', owner: { node_id: 'gpu-a', model: 'sd-1.5' }, helper: { node_id: 'gpu-b', model: 'sd-1.5' } },
] as const;

/** Models a demo node loads besides its `startup_model`, through the node API once the links are made (`preloadModel`). */
export const DEMO_PRELOADS: { node: DemoNodeId; localId: string }[] = [{ node: 'gpu-b', localId: 'sd-1.5' }];

/** Lending settings of every demo node: quick to decide and to fit, so leases show within seconds. */
export const DEMO_LENDING = {
  scheduling_refresh_interval: '1s',
  scheduling_min_samples: 3,
  offload_probe_idle: '2s',
  offload_restore_delay: '1.5s',
  health_interval: '1s',
  sync_interval: '1s',
};

export interface DemoPorts {
  master: number;
  'gpu-a': number;
  'gpu-b': number;
}

export interface DemoTokens {
  cluster: string;
  console: string;
}

const url = (port: number) => `http://127.0.0.1:${port}`;

/** The node config of one demo node. */
export function demoNodeConfig(id: DemoNodeId, ports: DemoPorts, tokens: DemoTokens): NodeConfigInput {
  const cluster = { node_id: id, token: tokens.cluster, store_dir: './store', ...DEMO_LENDING };
  const common = {
    server: { host: '127.0.0.1', port: ports[id] },
    models: { config_dir: './models' },
    console: { token: tokens.console },
  };
  if (id === 'master')
    return {
      ...common,
      cluster: {
        ...cluster,
        role: 'master',
        slave_urls: [url(ports['gpu-a']), url(ports['gpu-b'])],
      } as NodeConfigInput['cluster'],
    };
  return {
    ...common,
    // The helper's text model is loaded at boot, so it can be probed from the first burst on (PROBE-1).
    models: { ...common.models, ...(id === 'gpu-b' ? { startup_model: 'chat-7b' } : {}) },
    cluster: {
      ...cluster,
      role: 'slave',
      master_url: url(ports.master),
      public_url: url(ports[id]),
    } as NodeConfigInput['cluster'],
  };
}

/** Writes one node's folder (config rewritten, model configs written where missing); returns its config file. */
export function writeDemoNode(dir: string, id: DemoNodeId, ports: DemoPorts, tokens: DemoTokens): string {
  const nodeDir = join(dir, id);
  const modelsDir = join(nodeDir, 'models');
  mkdirSync(modelsDir, { recursive: true });
  for (const [file, config] of Object.entries(DEMO_MODELS[id])) {
    const path = join(modelsDir, `${file}.yaml`);
    if (!existsSync(path)) writeFileSync(path, stringify(config));
  }
  const configFile = join(nodeDir, 'node.yaml');
  writeFileSync(
    configFile,
    `# written by \`routerdesk demo\` at every start (ports and tokens change)\n${stringify(demoNodeConfig(id, ports, tokens))}`,
    { mode: 0o600 },
  );
  return configFile;
}

export interface DemoChild {
  id: DemoNodeId;
  url: string;
  proc: ChildProcess;
  /** The last output of the node (also in its node.log). */
  tail(): string;
}

/** Starts `routerdesk node --config FILE`; resolves once it listens, rejects (and kills it) when it exits first or within `timeoutMs` stays silent. */
export function startDemoNode(
  id: DemoNodeId,
  configFile: string,
  logFile: string,
  timeoutMs = 30_000,
): { child: Promise<DemoChild>; proc: ChildProcess } {
  const cli = cliRef();
  const proc = spawn(cli.node, [cli.script, 'node', '--config', configFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...cli.env, ROUTERDESK_LOG_LEVEL: process.env.ROUTERDESK_LOG_LEVEL ?? 'warn' },
  });
  const log = createWriteStream(logFile, { flags: 'a' });
  let out = '';
  const keep = (d: Buffer) => {
    log.write(d);
    out = (out + d.toString()).slice(-8_000);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  proc.once('exit', () => log.end());
  const child = new Promise<DemoChild>((resolve, reject) => {
    let started = false;
    const fail = (why: string) => {
      if (started) return;
      started = true;
      clearTimeout(timer);
      proc.kill('SIGKILL');
      reject(new Error(`node '${id}' ${why} (see ${logFile}):\n${out.slice(-2000)}`));
    };
    const timer = setTimeout(() => fail('did not start in time'), timeoutMs);
    proc.once('exit', (code, signal) => fail(`exited (${code ?? signal})`));
    proc.stdout!.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (!m || started) return;
      started = true;
      clearTimeout(timer);
      resolve({ id, url: m[1], proc, tail: () => out });
    });
  });
  return { child, proc };
}

/**
 * Loads a model on a demo node through its node API (`POST /router/v1/node/load`, the cluster token), as a recipe's
 * load does: not a request of the node's own, so the node keeps taking leases meanwhile (HELPER-1) and stays idle for
 * probes (PROBE-3). Resolves when it is loaded.
 */
export async function preloadModel(
  nodeUrl: string,
  clusterToken: string,
  localId: string,
  timeoutMs = 60_000,
): Promise<void> {
  const res = await fetch(`${nodeUrl}/router/v1/node/load`, {
    method: 'POST',
    headers: { authorization: `Bearer ${clusterToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ localId }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`loading ${localId}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  await res.arrayBuffer();
}

/** SIGTERM every child, SIGKILL the ones still running after `graceMs`; resolves when all exited. */
export async function stopChildren(procs: ChildProcess[], graceMs = 10_000): Promise<void> {
  await Promise.all(
    procs.map((proc) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const t = setTimeout(() => proc.kill('SIGKILL'), graceMs);
        proc.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        proc.kill('SIGTERM');
      });
    }),
  );
}

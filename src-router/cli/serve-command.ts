import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { locateEngine } from '../backends/engine-binaries';
import type { ModelConfigInput, NodeConfig } from '../config';
import { defaultNodeConfig, writeNodeConfigIfMissing } from '../config/default-config';
import { consoleAccessDir, consoleLink, writeLinkPage } from '../console-access';
import { describeTinyLlama, writeTinyLlamaGguf } from '../engines/llama-node/gguf-writer';
import { describeTinyWhisper, writeTinyWhisperModel } from '../engines/whisper-model/writer';
import { PRINTED_CODE_TTL_MS } from '../http/console-codes';
import { busyPortFallback, NodeHost } from '../node-host';
import { DEFAULT_SERVE_DIR } from '../paths';
import { StoreLockedError } from '../store';
import { stopOnSignals } from './node-command';
import { openBrowser } from './open-browser';

/**
 * The models `serve` sets up on first run: a real tiny llama.cpp model, a sim image model, and for transcription the
 * real whisper-server on a generated tiny model when one is on PATH or built (`routerdesk engines build`), else the sim.
 */
export const SERVE_MODELS: Record<string, ModelConfigInput> = {
  'tiny-chat': {
    name: 'tiny-chat',
    backend: 'llama-node',
    capabilities: ['text', 'embedding'],
    model: '../weights/tiny-chat.gguf',
    contextsize: 512,
    parallel: 1,
    llama_node: { threads: 1 },
  },
  'sim-image': {
    name: 'sim-image',
    backend: 'sim',
    capabilities: ['image'],
    engine: 'clutch-layers',
    sim: { load_time: '300ms', step_time: '20ms' },
  },
  'sim-whisper': {
    name: 'sim-whisper',
    backend: 'sim',
    capabilities: ['transcription'],
    engine: 'clutch-layers',
    sim: { load_time: '300ms', audio_time_per_second: '50ms' },
  },
};

/** The transcription model `serve` writes in sim-whisper's place when whisper-server is found. */
export const SERVE_WHISPER_MODEL: ModelConfigInput = {
  name: 'tiny-whisper',
  backend: 'whisper-server',
  capabilities: ['transcription'],
  model: '../weights/tiny-whisper.bin',
};
const TINY_WHISPER_WEIGHTS = 'tiny-whisper.bin';

/** The first-run model files: sim-whisper's place goes to whisper-server when `whisperServer` is found. */
export function serveModels(whisperServer: boolean): Record<string, ModelConfigInput> {
  if (!whisperServer) return SERVE_MODELS;
  const { 'sim-whisper': _sim, ...rest } = SERVE_MODELS;
  return { ...rest, 'tiny-whisper': SERVE_WHISPER_MODEL };
}

/** One line for the startup output: what transcription runs on here, and how to get the real engine when it is the sim. */
function transcriptionLine(modelsDir: string): string {
  if (existsSync(join(modelsDir, 'tiny-whisper.yaml'))) {
    const found = locateEngine('whisper-server');
    return found
      ? `tiny-whisper on whisper-server ${found.path}`
      : 'tiny-whisper on whisper-server, which is not found now: run routerdesk engines build --only whisper-server';
  }
  if (existsSync(join(modelsDir, 'sim-whisper.yaml'))) {
    return locateEngine('whisper-server')
      ? 'sim-whisper (the sim; whisper-server is available now: remove models/ to have serve set it up)'
      : 'sim-whisper (the sim; for the real whisper-server run routerdesk engines build --only whisper-server)';
  }
  return 'as configured in models/';
}

/** Writes the embedded defaults into `dir` where missing (never overwrites what an operator edited); returns the node config path. */
export async function prepareServeDir(dir: string, port: number): Promise<string> {
  const weights = join(dir, 'weights', 'tiny-chat.gguf');
  if (!existsSync(weights)) {
    mkdirSync(join(dir, 'weights'), { recursive: true });
    const result = await writeTinyLlamaGguf(weights, { embd: 128, layers: 2, type: 'f16', seed: 7 });
    process.stdout.write(`${describeTinyLlama(result)}\n`);
  }
  const modelsDir = join(dir, 'models');
  if (!existsSync(modelsDir)) {
    mkdirSync(modelsDir, { recursive: true });
    for (const [file, config] of Object.entries(serveModels(locateEngine('whisper-server') !== null)))
      writeFileSync(join(modelsDir, `${file}.yaml`), stringify(config));
  }
  // The generated whisper model is written whenever the config uses it and it is missing.
  const whisperWeights = join(dir, 'weights', TINY_WHISPER_WEIGHTS);
  if (existsSync(join(modelsDir, 'tiny-whisper.yaml')) && !existsSync(whisperWeights)) {
    mkdirSync(join(dir, 'weights'), { recursive: true });
    process.stdout.write(`${describeTinyWhisper(await writeTinyWhisperModel(whisperWeights, { seed: 1 }))}\n`);
  }
  const configFile = join(dir, 'node.yaml');
  writeNodeConfigIfMissing(
    configFile,
    defaultNodeConfig(port),
    '# Routerdesk node config written by `npm run serve`; edit freely (schema: resources/schema/node-config.schema.json)\n',
  );
  return configFile;
}

export async function serveCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { dir: { type: 'string' }, port: { type: 'string' }, 'no-open': { type: 'boolean' } },
    strict: true,
  });
  const dir = resolve(values.dir ?? DEFAULT_SERVE_DIR);
  const port = values.port ? Number(values.port) : 8080;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: not a port: ${values.port}`);
  const configFile = await prepareServeDir(dir, port);
  // The Settings screen can rewrite the config and restart the node in-process; --port wins at start.
  let first = true;
  const fallback = busyPortFallback((m) => process.stdout.write(`${m} (choose one with --port)\n`));
  const prepare = async (config: NodeConfig) => {
    const explicit = first && values.port;
    first = false;
    if (explicit) config.server.port = port;
    return explicit ? config : fallback(config);
  };
  // The console output stays readable: warnings and errors only, unless ROUTERDESK_LOG_LEVEL says otherwise.
  let host: NodeHost;
  try {
    host = await NodeHost.start({
      configFile,
      prepare,
      logLevel: process.env.ROUTERDESK_LOG_LEVEL ?? 'warn',
      log: (m) => process.stderr.write(`routerdesk serve: ${m}\n`),
      onRestart: (n) =>
        process.stdout.write(`Routerdesk restarted on its new settings (${n.config.cluster.role}): ${n.url}\n`),
    });
  } catch (err) {
    // A store another node uses is refused with the folder and the PID holding it, not a stack trace.
    if (!(err instanceof StoreLockedError)) throw err;
    process.stderr.write(`routerdesk serve: ${err.message}\n`);
    process.exit(1);
  }
  stopOnSignals(host);
  const node = host.current;
  // Neither the browser's command line (every local user sees it in `ps`) nor this output carries the console token.
  // The printed link holds a one-time code of its own; the browser is started on an owner-only page that holds
  // another, never on a URL carrying one (a local user watching command lines would exchange it first).
  const printed = () => consoleLink(host.current.url, host.current.consoleCodes.issue(PRINTED_CODE_TTL_MS));
  const more = process.stdin.isTTY ? '; press Enter for a new link' : '';
  process.stdout.write(
    `\nRouterdesk is serving (${node.config.cluster.role}, config ${configFile})\n  UI:      ${printed()}  (opens the console once, within ${PRINTED_CODE_TTL_MS / 60_000} minutes${more})\n` +
      `           a new link any time: routerdesk console-link --dir ${dir}\n` +
      `  OpenAI:  ${node.url}/v1   Ollama: ${node.url}/api\n  models:  ${node.registry.publicIds().join(', ')}\n` +
      `  speech:  ${transcriptionLine(join(dir, 'models'))}\n`,
  );
  if (process.stdin.isTTY) {
    process.stdin.on('data', () => process.stdout.write(`  UI:      ${printed()}\n`));
    process.stdin.unref();
  }
  if (!values['no-open'] && (process.env.DISPLAY || process.env.WAYLAND_DISPLAY))
    openBrowser(writeLinkPage(consoleAccessDir(node.config.cluster.store_dir), node.url, node.consoleCodes.issue()));
}

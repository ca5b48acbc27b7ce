import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { loadNodeConfig, type ModelConfigInput, type NodeConfigInput } from '../config';
import { describeTinyLlama, writeTinyLlamaGguf } from '../engines/llama-node/gguf-writer';
import { createNode, type RouterNode } from '../node';
import { DEFAULT_SERVE_DIR } from '../paths';
import { StoreLockedError } from '../store';
import { stopOnSignals } from './node-command';

/** The models `serve` sets up on first run: a real tiny llama.cpp model, and sim image and transcription models. */
export const SERVE_MODELS: Record<string, ModelConfigInput> = {
  'tiny-chat': { name: 'tiny-chat', backend: 'llama-node', capabilities: ['text', 'embedding'], model: '../weights/tiny-chat.gguf', contextsize: 512, parallel: 1, llama_node: { threads: 1 } },
  'sim-image': { name: 'sim-image', backend: 'sim', capabilities: ['image'], engine: 'clutch-layers', sim: { load_time: '300ms', step_time: '20ms' } },
  'sim-whisper': { name: 'sim-whisper', backend: 'sim', capabilities: ['transcription'], engine: 'clutch-layers', sim: { load_time: '300ms', audio_time_per_second: '50ms' } },
};

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
    for (const [file, config] of Object.entries(SERVE_MODELS)) writeFileSync(join(modelsDir, `${file}.yaml`), stringify(config));
  }
  const configFile = join(dir, 'node.yaml');
  if (!existsSync(configFile)) {
    const config: NodeConfigInput = {
      server: { host: '127.0.0.1', port },
      cluster: { role: 'standalone', node_id: 'local', store_dir: './store' },
      models: { config_dir: './models' },
    };
    writeFileSync(configFile, `# Routerdesk node config written by \`npm run serve\`; edit freely (schema: resources/schema/node-config.schema.json)\n${stringify(config)}`);
  }
  return configFile;
}

export async function serveCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { dir: { type: 'string' }, port: { type: 'string' }, 'no-open': { type: 'boolean' } }, strict: true });
  const dir = resolve(values.dir ?? DEFAULT_SERVE_DIR);
  const port = values.port ? Number(values.port) : 8080;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: not a port: ${values.port}`);
  const configFile = await prepareServeDir(dir, port);
  const config = loadNodeConfig(configFile);
  if (values.port) config.server.port = port;
  else if (config.server.port && !(await portFree(config.server.host, config.server.port))) {
    process.stdout.write(`port ${config.server.port} is in use: serving on a free port instead (choose one with --port)\n`);
    config.server.port = 0;
  }
  // The console output stays readable: warnings and errors only, unless ROUTERDESK_LOG_LEVEL says otherwise.
  let node: RouterNode;
  try {
    node = await createNode(config, { logLevel: process.env.ROUTERDESK_LOG_LEVEL ?? 'warn', configFile });
  } catch (err) {
    // Issue #9: a store another node uses is refused with the folder and the PID holding it, not a stack trace.
    if (!(err instanceof StoreLockedError)) throw err;
    process.stderr.write(`routerdesk serve: ${err.message}\n`);
    process.exit(1);
  }
  stopOnSignals(node);
  const link = `${node.url}/?token=${encodeURIComponent(node.consoleToken)}`;
  process.stdout.write(`\nRouterdesk is serving (standalone, config ${configFile})\n  UI:      ${link}\n  OpenAI:  ${node.url}/v1   Ollama: ${node.url}/api\n  models:  ${node.registry.publicIds().join(', ')}\n`);
  if (!values['no-open'] && process.env.DISPLAY) openBrowser(link);
}

function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

function openBrowser(url: string) {
  const child = spawn('xdg-open', [url], { stdio: 'ignore', detached: true });
  child.on('error', () => {});
  child.unref();
}

/** CLI entries: `routerdesk llama-engine …` (the engine process) and `routerdesk make-model …` (a tiny GGUF). */
import { existsSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { describeTinyLlama, WEIGHT_TYPES, type WeightType, writeTinyLlamaGguf } from './gguf-writer';
import { type LlamaEngineOptions, startLlamaEngine } from './server';

export const LLAMA_ENGINE_USAGE = `usage: routerdesk llama-engine --model FILE.gguf [options]
  --host H          listen address (default 127.0.0.1)
  --port N          listen port, 0 for any free one (default 8080)
  --model FILE      GGUF model to serve (required)
  --alias NAME      model id in responses (default: file name without .gguf)
  --ctx N           context tokens per sequence (default: the model's, at most 4096)
  --parallel N      sequences generating at once; more requests queue FIFO (default 1)
  --threads N       threads per evaluation (default 1)
  --no-mmap         read the model into memory instead of mapping it
  --exit-with-stdin exit when stdin ends (the engine dies with its supervisor)
`;

export const MAKE_MODEL_USAGE = `usage: routerdesk make-model OUT.gguf [--embd N] [--layers N] [--type f32|f16|q8_0] [--seed N]
                                   [--heads N] [--kv-heads N] [--ff N] [--ctx N]
  defaults: --embd 64 --layers 2 --type f32 --seed 1 --heads 4 --ctx 2048
`;

export class UsageError extends Error {
  override name = 'UsageError';
}

function int(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number, got '${raw}'`);
  const value = Number(raw);
  if (value < min || value > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

type OptionSpec = Record<string, { type: 'string' } | { type: 'boolean' }>;

function parse<const O extends OptionSpec>(argv: string[], options: O, positionals = false) {
  try {
    const all = { ...options, help: { type: 'boolean', short: 'h' } } as const;
    return parseArgs({ args: argv, options: all, strict: true, allowPositionals: positionals });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export interface LlamaEngineArgs {
  help: boolean;
  exitWithStdin: boolean;
  options: LlamaEngineOptions;
}

export function parseLlamaEngineArgs(argv: string[]): LlamaEngineArgs {
  const s = { type: 'string' } as const;
  const b = { type: 'boolean' } as const;
  const { values } = parse(argv, {
    host: s,
    port: s,
    model: s,
    alias: s,
    ctx: s,
    parallel: s,
    threads: s,
    'no-mmap': b,
    'exit-with-stdin': b,
  });
  const str = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
  if (values.help) return { help: true, exitWithStdin: false, options: { port: 0, modelPath: '' } };
  const modelPath = str(values.model);
  if (!modelPath) throw new UsageError('--model FILE.gguf is required');
  if (!existsSync(modelPath) || !statSync(modelPath).isFile())
    throw new UsageError(`--model ${modelPath}: no such file`);
  const alias = str(values.alias);
  if (alias !== undefined && alias.trim() === '') throw new UsageError('--alias must not be empty');
  return {
    help: false,
    exitWithStdin: values['exit-with-stdin'] === true,
    options: {
      host: str(values.host) ?? '127.0.0.1',
      port: int('port', str(values.port), 0, 65535) ?? 8080,
      modelPath,
      alias,
      contextSize: int('ctx', str(values.ctx), 16, 1 << 20),
      parallel: int('parallel', str(values.parallel), 1, 256) ?? 1,
      threads: int('threads', str(values.threads), 1, 1024) ?? 1,
      useMmap: values['no-mmap'] !== true,
    },
  };
}

function usageFailure(command: string, err: unknown, usage: string): void {
  if (!(err instanceof UsageError) && !(err instanceof RangeError)) throw err;
  process.stderr.write(`routerdesk ${command}: ${err.message}\n\n${usage}`);
  process.exitCode = 2;
}

/** Starts the engine; the process then lives until SIGTERM / SIGINT, or until stdin ends with --exit-with-stdin. */
export async function llamaEngineMain(argv: string[]): Promise<void> {
  let args: LlamaEngineArgs;
  try {
    args = parseLlamaEngineArgs(argv);
  } catch (err) {
    return usageFailure('llama-engine', err, LLAMA_ENGINE_USAGE);
  }
  if (args.help) return void process.stdout.write(LLAMA_ENGINE_USAGE);
  const engine = await startLlamaEngine(args.options);
  const tag = `llama-node[${engine.alias}]`;
  process.stdout.write(`${tag} listening on ${engine.url} model=${args.options.modelPath}\n`);

  let exiting = false;
  const shutdown = (code: number, why: string) => {
    if (exiting) return;
    exiting = true;
    process.stderr.write(`${tag} ${why}, shutting down\n`);
    const force = setTimeout(() => process.exit(code), 5000);
    force.unref();
    void engine
      .close()
      .catch((err: unknown) => process.stderr.write(`${tag} close failed: ${String(err)}\n`))
      .finally(() => process.exit(code));
  };
  // `on`, not `once`: node-llama-cpp's dependencies use signal-exit, which re-raises a signal (killing the process
  // with 143) when its own handler is the only one left, which `once` would arrange.
  process.on('SIGTERM', () => shutdown(0, 'SIGTERM'));
  process.on('SIGINT', () => shutdown(0, 'SIGINT'));
  if (args.exitWithStdin) {
    process.stdin.on('end', () => shutdown(0, 'stdin ended'));
    process.stdin.on('error', () => shutdown(0, 'stdin failed'));
    process.stdin.resume();
  }

  engine.ready.then(
    (info) =>
      process.stdout.write(
        `${tag} ready in ${info.loadMs} ms: ctx=${info.contextSize} parallel=${info.parallel} embd=${info.embeddingSize} chat=${info.chatWrapper}\n`,
      ),
    (err: unknown) => {
      if (exiting) return;
      process.stderr.write(
        `${tag} failed to load ${args.options.modelPath}: ${(err as Error)?.message ?? String(err)}\n`,
      );
      shutdown(1, 'model failed to load');
    },
  );
}

export interface MakeModelArgs {
  help: boolean;
  out: string;
  embd: number;
  layers: number;
  type: WeightType;
  seed: number;
  heads?: number;
  kvHeads?: number;
  ff?: number;
  ctx?: number;
}

export function parseMakeModelArgs(argv: string[]): MakeModelArgs {
  const s = { type: 'string' } as const;
  const { values, positionals } = parse(
    argv,
    { embd: s, layers: s, type: s, seed: s, heads: s, 'kv-heads': s, ff: s, ctx: s },
    true,
  );
  const str = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
  if (values.help) return { help: true, out: '', embd: 0, layers: 0, type: 'f32', seed: 0 };
  if (positionals.length !== 1) throw new UsageError(`expected one output file, got ${positionals.length}`);
  const type = str(values.type) ?? 'f32';
  if (!(WEIGHT_TYPES as readonly string[]).includes(type))
    throw new UsageError(`--type must be one of ${WEIGHT_TYPES.join(', ')}, got '${type}'`);
  return {
    help: false,
    out: positionals[0],
    embd: int('embd', str(values.embd), 8, 16384) ?? 64,
    layers: int('layers', str(values.layers), 1, 256) ?? 2,
    type: type as WeightType,
    seed: int('seed', str(values.seed), 0, 0xffffffff) ?? 1,
    heads: int('heads', str(values.heads), 1, 16384),
    kvHeads: int('kv-heads', str(values['kv-heads']), 1, 16384),
    ff: int('ff', str(values.ff), 1, 1 << 18),
    ctx: int('ctx', str(values.ctx), 8, 1 << 20),
  };
}

/** `routerdesk make-model OUT.gguf …`: writes the model and prints one line describing it. */
export async function makeModelMain(argv: string[]): Promise<void> {
  try {
    const args = parseMakeModelArgs(argv);
    if (args.help) return void process.stdout.write(MAKE_MODEL_USAGE);
    const { out, help: _help, ...options } = args;
    const result = await writeTinyLlamaGguf(out, options);
    process.stdout.write(describeTinyLlama(result) + '\n');
  } catch (err) {
    usageFailure('make-model', err, MAKE_MODEL_USAGE);
  }
}

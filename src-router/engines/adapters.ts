import type { BackendFamily, ModelConfig } from '../config';
import type { Lane } from '../contract';
import { expandCommand } from './command-template';
import { SHAPES } from './shapes';
import type { EngineAdapter, EngineShape, LaunchContext, LaunchSpec } from './types';

export type BackendMode = 'llama_sdcpp' | 'kobold';

/**
 * Default command templates of the external engines (binaries found on PATH); a model config's `command` replaces them.
 * llama-server: `--metrics` (no /metrics without it), `--slots` (/slots), `--jinja` (the GGUF's own chat template),
 * flags a current build accepts (`../shared/reference/llama-server/README.md`); see `defaultTemplate` for embeddings.
 */
export const DEFAULT_TEMPLATES: Partial<Record<BackendFamily, string>> = {
  'llama-server':
    'llama-server --host ${HOST} --port ${PORT} -m ${MODEL} --alias ${ALIAS} -c ${CONTEXTSIZE} -np ${PARALLEL} --metrics --slots --jinja',
  'sd-server': 'sd-server --listen-ip ${HOST} --listen-port ${PORT} -m ${MODEL}',
  'whisper-server': 'whisper-server --host ${HOST} --port ${PORT} -m ${MODEL}',
  koboldcpp: 'koboldcpp --host ${HOST} --port ${PORT} --model ${MODEL} --contextsize ${CONTEXTSIZE} --quiet',
  vllm: 'vllm serve ${MODEL} --host ${HOST} --port ${PORT} --served-model-name ${ALIAS}',
};

/**
 * The default template for one model config: a llama-server model with the `embedding` capability also gets
 * `--embeddings --pooling mean` (without them /v1/embeddings is refused; a GGUF naming no pooling type needs the latter).
 */
export function defaultTemplate(family: BackendFamily, config: ModelConfig): string | undefined {
  const template = DEFAULT_TEMPLATES[family];
  if (template && family === 'llama-server' && config.capabilities.includes('embedding'))
    return `${template} --embeddings --pooling mean`;
  return template;
}

const FAMILY_SHAPE: Record<Exclude<BackendFamily, 'sim'>, EngineShape> = {
  'llama-server': 'llama-server',
  'llama-node': 'llama-server',
  vllm: 'vllm',
  'sd-server': 'sd-server',
  'whisper-server': 'whisper-server',
  koboldcpp: 'koboldcpp',
};

const SHAPE_LANE: Record<EngineShape, Lane> = {
  'llama-server': 'text',
  vllm: 'text',
  'sd-server': 'image',
  'whisper-server': 'whisper',
  koboldcpp: 'shared',
};

/** The sim engine takes the shape of whatever lane its capabilities put it in (HEALTH-3). */
function simShape(config: ModelConfig, mode: BackendMode): EngineShape {
  if (mode === 'kobold') return 'koboldcpp';
  const caps = new Set(config.capabilities);
  if (caps.has('transcription')) return 'whisper-server';
  if (caps.has('image') || caps.has('video')) return 'sd-server';
  return 'llama-server';
}

function templateVars(config: ModelConfig, ctx: LaunchContext) {
  return {
    HOST: ctx.host,
    PORT: ctx.port,
    MODEL: config.model,
    ALIAS: ctx.localId,
    CONTEXTSIZE: config.contextsize ?? config.vllm?.settings.max_model_length ?? 4096,
    PARALLEL: config.parallel ?? config.vllm?.settings.max_number_sequences ?? 1,
  };
}

/** A template's first word names the program, which the context may resolve (the node: to the engines cache's build). */
function fromTemplate(template: string, config: ModelConfig, ctx: LaunchContext): LaunchSpec {
  const [command, ...args] = expandCommand(template, templateVars(config, ctx));
  if (!command) throw new Error('command template is empty');
  return { command: ctx.resolveCommand?.(command) ?? command, args, env: config.env };
}

function builtin(ctx: LaunchContext, sub: string, args: (string | number)[], config: ModelConfig): LaunchSpec {
  return {
    command: ctx.cli.node,
    args: [ctx.cli.script, sub, ...args.map(String), '--exit-with-stdin'],
    env: { ...ctx.cli.env, ...config.env },
  };
}

function launchLlamaNode(config: ModelConfig, ctx: LaunchContext): LaunchSpec {
  if (!config.model) throw new Error('llama-node needs `model` (a GGUF file)');
  const o = config.llama_node ?? { threads: 1, use_mmap: true };
  const args: (string | number)[] = [
    '--host',
    ctx.host,
    '--port',
    ctx.port,
    '--model',
    config.model,
    '--alias',
    ctx.localId,
    '--threads',
    o.threads,
  ];
  if (config.contextsize) args.push('--ctx', config.contextsize);
  args.push('--parallel', config.parallel ?? 1);
  if (!o.use_mmap) args.push('--no-mmap');
  return builtin(ctx, 'llama-engine', args, config);
}

function launchSim(shape: EngineShape) {
  return (config: ModelConfig, ctx: LaunchContext): LaunchSpec => {
    const s = config.sim;
    const args: (string | number)[] = [
      '--host',
      ctx.host,
      '--port',
      ctx.port,
      '--shape',
      shape,
      '--alias',
      ctx.localId,
      '--parallel',
      config.parallel ?? 1,
    ];
    // A sim model reads images only when its config says so; otherwise it refuses them as a llama-server without mmproj.
    if (config.capabilities.includes('multimodal')) args.push('--vision');
    if (config.contextsize) args.push('--ctx', config.contextsize);
    if (s) {
      args.push(
        '--load-time',
        s.load_time,
        '--token-time',
        s.token_time,
        '--step-time',
        s.step_time,
        '--audio-time',
        s.audio_time_per_second,
      );
      args.push(
        '--time-scale',
        s.time_scale,
        '--tokens',
        s.tokens,
        '--kv-pages',
        s.kv_pages,
        '--fail',
        s.fail,
        '--image-refusal',
        s.image_refusal,
      );
      if (s.no_timings) args.push('--no-timings');
    }
    return builtin(ctx, 'sim-engine', args, config);
  };
}

/** The adapter for one model config under the node's backend mode. */
export function adapterFor(config: ModelConfig, mode: BackendMode): EngineAdapter {
  const family = config.backend;
  const shape = family === 'sim' ? simShape(config, mode) : FAMILY_SHAPE[family];
  const { healthPath, routes } = SHAPES[shape];
  let launch: EngineAdapter['launch'];
  if (config.command) launch = (c, ctx) => fromTemplate(config.command!, c, ctx);
  else if (family === 'sim') launch = launchSim(shape);
  else if (family === 'llama-node') launch = launchLlamaNode;
  else {
    launch = (c, ctx) => {
      if (!c.model) throw new Error(`${family} needs \`model\` (a weights file) or a \`command\``);
      return fromTemplate(defaultTemplate(family, c)!, c, ctx);
    };
  }
  return { family, shape, lane: SHAPE_LANE[shape], healthPath, routes, launch };
}

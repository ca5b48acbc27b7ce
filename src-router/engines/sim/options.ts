import { parseArgs } from 'node:util';
import { z } from 'zod';
import { simOptionsSchema } from '../../config/model-config';

/** The HTTP dialects the sim engine speaks. `vllm` answers like `llama-server`. */
export const SIM_SHAPES = ['llama-server', 'sd-server', 'whisper-server', 'koboldcpp', 'vllm'] as const;
export type SimShape = (typeof SIM_SHAPES)[number];

/**
 * Everything a sim engine process needs: the model config's `sim` options (same keys, same
 * defaults, durations in ms once parsed) plus where to listen and what to pretend to be.
 */
export const simEngineOptionsSchema = simOptionsSchema.extend({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.number().int().min(0).max(65_535).default(0),
  shape: z.enum(SIM_SHAPES).default('llama-server'),
  alias: z.string().min(1).default('sim'),
  parallel: z.number().int().min(1).default(1),
  /** The model reads images (its model config has the `multimodal` capability); without it image input is refused. */
  vision: z.boolean().default(false),
  /** Context window in tokens (the model config's `contextsize`), reported by the llama-server shape's /props and /slots. */
  ctx: z.number().int().min(1).default(4096),
  exit_with_stdin: z.boolean().default(false),
});

export type SimEngineOptionsInput = z.input<typeof simEngineOptionsSchema>;
export type SimEngineOptions = z.output<typeof simEngineOptionsSchema>;
export type SimFailMode = SimEngineOptions['fail'];

/** A bad command line: the message is meant for a human, the exit code is 2. */
export class SimOptionsError extends Error {
  readonly code = 'sim_options_invalid';
}

type FlagKind = 'string' | 'number' | 'duration' | 'boolean';

/** CLI flag → option key. Durations take the config's syntax (`250ms`, `2s`, a bare number = ms). */
const FLAGS: Record<string, { key: keyof SimEngineOptions; kind: FlagKind }> = {
  host: { key: 'host', kind: 'string' },
  port: { key: 'port', kind: 'number' },
  shape: { key: 'shape', kind: 'string' },
  alias: { key: 'alias', kind: 'string' },
  'load-time': { key: 'load_time', kind: 'duration' },
  'token-time': { key: 'token_time', kind: 'duration' },
  'step-time': { key: 'step_time', kind: 'duration' },
  'audio-time': { key: 'audio_time_per_second', kind: 'duration' },
  'time-scale': { key: 'time_scale', kind: 'number' },
  tokens: { key: 'tokens', kind: 'number' },
  parallel: { key: 'parallel', kind: 'number' },
  'kv-pages': { key: 'kv_pages', kind: 'number' },
  fail: { key: 'fail', kind: 'string' },
  'image-refusal': { key: 'image_refusal', kind: 'number' },
  vision: { key: 'vision', kind: 'boolean' },
  ctx: { key: 'ctx', kind: 'number' },
  'no-timings': { key: 'no_timings', kind: 'boolean' },
  'exit-with-stdin': { key: 'exit_with_stdin', kind: 'boolean' },
};

const flagOfKey = (key: string): string => Object.entries(FLAGS).find(([, f]) => f.key === key)?.[0] ?? key;

export const SIM_ENGINE_USAGE = `usage: sim-engine [flags]
  --host HOST          listen address (default 127.0.0.1)
  --port N             listen port, 0 picks a free one (default 0)
  --shape SHAPE        ${SIM_SHAPES.join(' | ')} (default llama-server)
  --alias ID           model ID it serves (default sim)
  --load-time DUR      time before /health turns ready (default 200ms)
  --token-time DUR     time per generated token (default 5ms)
  --step-time DUR      time per image step (default 5ms)
  --audio-time DUR     time per second of audio transcribed (default 20ms)
  --time-scale X       every duration is divided by X (default 1)
  --tokens N           tokens generated when a request sets no max_tokens (default 16)
  --parallel N         concurrent slots; more requests wait FIFO (default 1)
  --kv-pages N         KV cache pages reported in /metrics (default 256)
  --ctx N              context window reported by /props and /slots (llama-server shape; default 4096)
  --fail MODE          none | crash_on_start | crash_on_request | http_500 | image_not_supported | slow_health
                       (image_not_supported: refuse image input even with --vision)
  --vision             the model reads images (multimodal); without it, chat with image parts is refused
                       as llama-server without a projector refuses it
  --image-refusal N    HTTP status of an image refusal: 500 (llama-server, default) or 400
  --no-timings         llama-server shape: answer without "timings" (an engine that reports none)
  --exit-with-stdin    exit when stdin ends (dies with its supervisor)
  --help               print this and exit`;

/** Validates and fills defaults; throws SimOptionsError naming the bad fields. */
export function resolveSimEngineOptions(input: SimEngineOptionsInput = {}): SimEngineOptions {
  const result = simEngineOptionsSchema.safeParse(input);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const where = issue.path.length ? String(issue.path[0]) : '(options)';
    const what =
      issue.code === 'unrecognized_keys'
        ? `unknown option${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`
        : issue.message;
    return `  ${where}: ${what}`;
  });
  throw new SimOptionsError(`sim-engine: invalid options\n${lines.join('\n')}`);
}

/** Parses `sim-engine` argv. Returns 'help' for --help; throws SimOptionsError on bad flags. */
export function parseSimEngineArgv(argv: string[]): SimEngineOptions | 'help' {
  let values: Record<string, string | boolean | undefined>;
  try {
    const parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries(
          Object.entries(FLAGS).map(
            ([flag, f]) => [flag, { type: f.kind === 'boolean' ? 'boolean' : 'string' }] as const,
          ),
        ),
      },
    });
    values = parsed.values as Record<string, string | boolean | undefined>;
  } catch (err) {
    throw new SimOptionsError(`sim-engine: ${(err as Error).message}\n${SIM_ENGINE_USAGE}`);
  }
  if (values.help) return 'help';
  const raw: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [flag, { key, kind }] of Object.entries(FLAGS)) {
    const value = values[flag];
    if (value === undefined) continue;
    if (kind === 'number') {
      const n = typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : Number.NaN;
      if (Number.isNaN(n)) problems.push(`  --${flag}: not a number: ${JSON.stringify(value)}`);
      raw[key] = n;
    } else {
      raw[key] = value;
    }
  }
  if (problems.length) throw new SimOptionsError(`sim-engine: invalid flags\n${problems.join('\n')}`);
  const result = simEngineOptionsSchema.safeParse(raw);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  --${flagOfKey(String(issue.path[0] ?? ''))}: ${issue.message}`);
  throw new SimOptionsError(`sim-engine: invalid flags\n${lines.join('\n')}`);
}

/** The argv that makes `sim-engine` run with these options (only non-default values are written). */
export function simEngineArgv(input: SimEngineOptionsInput): string[] {
  const options = resolveSimEngineOptions(input);
  const defaults = resolveSimEngineOptions({});
  const argv: string[] = [];
  for (const [flag, { key, kind }] of Object.entries(FLAGS)) {
    const value = options[key];
    if (key !== 'shape' && key !== 'alias' && key !== 'port' && value === defaults[key]) continue;
    if (kind === 'boolean') {
      if (value) argv.push(`--${flag}`);
    } else {
      argv.push(`--${flag}`, kind === 'duration' ? `${value}ms` : String(value));
    }
  }
  return argv;
}

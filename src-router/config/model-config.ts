import { z } from 'zod';
import { duration, optionalDuration } from './duration';

export const BACKEND_FAMILIES = [
  'llama-server',
  'sd-server',
  'whisper-server',
  'koboldcpp',
  'vllm',
  'llama-node',
  'sim',
] as const;
export type BackendFamily = (typeof BACKEND_FAMILIES)[number];

export const CAPABILITIES = [
  'text',
  'embedding',
  'multimodal',
  'speech',
  'music',
  'image',
  'video',
  'transcription',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** Options of the sim engine: how long things take and what goes wrong. */
export const simOptionsSchema = z
  .object({
    load_time: duration('200ms').describe('how long a load takes'),
    token_time: duration('5ms').describe('time per generated token'),
    step_time: duration('5ms').describe('time per image step'),
    audio_time_per_second: duration('20ms').describe('transcription time per second of audio'),
    time_scale: z.number().positive().default(1).describe('factor applied to every time above'),
    tokens: z.number().int().min(1).default(16).describe('tokens generated when the client sets no max_tokens'),
    fail: z
      .enum(['none', 'crash_on_start', 'crash_on_request', 'http_500', 'image_not_supported', 'slow_health'])
      .default('none')
      .describe(
        'a failure to simulate; image_not_supported: refuse image input even when the model config says multimodal',
      ),
    image_refusal: z
      .literal([400, 500], { error: 'must be 400 or 500' })
      .default(500)
      .describe(
        'HTTP status of an image refusal (a text-only model, or fail: image_not_supported): 500 as llama-server answers, 400 as engines that validate first',
      ),
    kv_pages: z
      .number()
      .int()
      .min(1)
      .default(256)
      .describe('KV-cache pages the engine reports in its metrics (clutch_kv_pages_used/free)'),
    no_timings: z
      .boolean()
      .default(false)
      .describe(
        'llama-server shape: answer without `timings`, like an engine that reports none (the router then derives service times)',
      ),
  })
  .strict();

/** Options of the built-in llama-node engine. */
export const llamaNodeOptionsSchema = z
  .object({
    threads: z.number().int().min(1).default(1).describe('CPU threads of the engine (1 is fastest on 2 cores)'),
    use_mmap: z.boolean().default(true).describe('map the weights file into memory instead of reading it'),
    batch_size: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("prompt tokens evaluated per batch; absent: node-llama-cpp's default"),
  })
  .strict();

export const modelConfigSchema = z
  .object({
    name: z.string().min(1).describe('public model ID; configs sharing a name on one node are replicas (ID-4)'),
    backend: z.enum(BACKEND_FAMILIES).describe('engine family that serves the model'),
    capabilities: z
      .array(z.enum(CAPABILITIES))
      .min(1)
      .default(['text'])
      .describe(
        'what the model does; decides its lane (HEALTH-3), and multimodal marks a text model that reads images (GUARD-1)',
      ),
    model: z.string().optional().describe('weights file; relative paths are read from the config file folder'),
    command: z
      .string()
      .optional()
      .describe(
        'command template for external engines: ${PORT}, ${MODEL}, ${HOST}, ${CONTEXTSIZE}, ${PARALLEL}, ${ALIAS}',
      ),
    contextsize: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('context window in tokens; a text model needs one to be lent (LLM-1)'),
    parallel: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('sequences the engine serves at once; lending needs 1 or unset (LLM-1)'),
    max_queue: z
      .number()
      .int()
      .positive()
      .max(1_000_000)
      .optional()
      .describe(
        'requests of this model that may wait for its engine at once; more get 429 with Retry-After (server.max_queue bounds the node)',
      ),
    vllm: z
      .object({
        settings: z
          .object({
            max_number_sequences: z
              .number()
              .int()
              .positive()
              .optional()
              .describe("vLLM's concurrent sequences; lending needs 1 or unset (LLM-1)"),
            max_model_length: z
              .number()
              .int()
              .positive()
              .optional()
              .describe("vLLM's context window in tokens (LLM-1)"),
          })
          .strict()
          .default({})
          .describe("vLLM's own limits"),
      })
      .strict()
      .optional()
      .describe('vLLM engine settings'),
    engine: z.string().optional().describe('metrics profile label: clutch-layers, vllm or llama.cpp (ROUTE-4)'),
    env: z
      .record(z.string(), z.string())
      .default({})
      .describe(
        "environment of the engine process, over the few variables it takes from the node (PATH, HOME, locale, GPU and thread-pool variables); the node's own (ROUTERDESK_*, INFERENCE_*) reach it only when set here",
      ),
    load_timeout: duration('2m', { min: 1000 }).describe('longest the engine may take to become healthy (at least 1s)'),
    ttl: optionalDuration().describe(
      "idle time after which the engine is stopped (the model unloaded) until its next request; absent: it stays loaded. An Ollama request's keep_alive overrides it until the model unloads",
    ),
    sim: simOptionsSchema.optional().describe('options of the sim engine (backend: sim)'),
    llama_node: llamaNodeOptionsSchema
      .optional()
      .describe('options of the built-in llama.cpp engine (backend: llama-node)'),
  })
  .strict();

export type ModelConfigInput = z.input<typeof modelConfigSchema>;
export type ModelConfig = z.output<typeof modelConfigSchema>;
export type SimOptions = z.output<typeof simOptionsSchema>;

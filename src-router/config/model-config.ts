import { z } from 'zod';
import { duration, optionalDuration } from './duration';

export const BACKEND_FAMILIES = ['llama-server', 'sd-server', 'whisper-server', 'koboldcpp', 'vllm', 'llama-node', 'sim'] as const;
export type BackendFamily = (typeof BACKEND_FAMILIES)[number];

export const CAPABILITIES = ['text', 'embedding', 'multimodal', 'speech', 'music', 'image', 'video', 'transcription'] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** Options of the sim engine: how long things take and what goes wrong. */
export const simOptionsSchema = z
  .object({
    load_time: duration('200ms'),
    token_time: duration('5ms'),
    step_time: duration('5ms'),
    audio_time_per_second: duration('20ms'),
    time_scale: z.number().positive().default(1),
    tokens: z.number().int().min(1).default(16).describe('tokens generated when the client sets no max_tokens'),
    fail: z
      .enum(['none', 'crash_on_start', 'crash_on_request', 'http_500', 'image_not_supported', 'slow_health'])
      .default('none')
      .describe('image_not_supported: refuse image input even when the model config says multimodal'),
    image_refusal: z
      .literal([400, 500], { error: 'must be 400 or 500' })
      .default(500)
      .describe('HTTP status of an image refusal (a text-only model, or fail: image_not_supported): 500 as llama-server answers, 400 as engines that validate first'),
    kv_pages: z.number().int().min(1).default(256),
    no_timings: z.boolean().default(false).describe('llama-server shape: answer without `timings`, like an engine that reports none (the router then derives service times)'),
  })
  .strict();

/** Options of the built-in llama-node engine. */
export const llamaNodeOptionsSchema = z
  .object({
    threads: z.number().int().min(1).default(1),
    use_mmap: z.boolean().default(true),
    batch_size: z.number().int().min(1).optional(),
  })
  .strict();

export const modelConfigSchema = z
  .object({
    name: z.string().min(1).describe('public model ID'),
    backend: z.enum(BACKEND_FAMILIES),
    capabilities: z.array(z.enum(CAPABILITIES)).min(1).default(['text']),
    model: z.string().optional().describe('weights file; relative paths are read from the config file folder'),
    command: z.string().optional().describe('command template for external engines: ${PORT}, ${MODEL}, ${HOST}, ${CONTEXTSIZE}, ${PARALLEL}, ${ALIAS}'),
    contextsize: z.number().int().positive().optional(),
    parallel: z.number().int().positive().optional(),
    max_queue: z.number().int().positive().max(1_000_000).optional().describe('requests of this model that may wait for its engine at once; more get 429 with Retry-After (server.max_queue bounds the node)'),
    vllm: z
      .object({
        settings: z
          .object({
            max_number_sequences: z.number().int().positive().optional(),
            max_model_length: z.number().int().positive().optional(),
          })
          .strict()
          .default({}),
      })
      .strict()
      .optional(),
    engine: z.string().optional().describe('metrics profile label, e.g. clutch-layers'),
    env: z.record(z.string(), z.string()).default({}).describe('environment of the engine process, over the few variables it takes from the node (PATH, HOME, locale, GPU and thread-pool variables); the node\'s own (ROUTERDESK_*, INFERENCE_*) reach it only when set here'),
    load_timeout: duration('2m'),
    ttl: optionalDuration().describe('idle time after which the engine is stopped (the model unloaded) until its next request; absent: it stays loaded. An Ollama request\'s keep_alive overrides it until the model unloads'),
    sim: simOptionsSchema.optional(),
    llama_node: llamaNodeOptionsSchema.optional(),
  })
  .strict();

export type ModelConfigInput = z.input<typeof modelConfigSchema>;
export type ModelConfig = z.output<typeof modelConfigSchema>;
export type SimOptions = z.output<typeof simOptionsSchema>;

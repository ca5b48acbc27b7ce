import type { FastifyInstance } from 'fastify';
import type { SimEngineContext } from './context';

/** What llama-server names its build in /props and `system_fingerprint` (a build from source without git metadata). */
export const LLAMA_SERVER_BUILD = 'b0-unknown';

const CHATML_TEMPLATE =
  "{%- for message in messages -%}\n  {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' -}}\n{%- endfor -%}\n" +
  "{%- if add_generation_prompt -%}\n  {{- '<|im_start|>assistant\n' -}}\n{%- endif -%}";

/**
 * GET /props as a current llama-server answers it (`reference/llama-server/props.json`): the generation defaults
 * with the slot context, the slot count, the model's modalities (vision from `--vision`), which endpoints are on.
 */
export function simProps(ctx: SimEngineContext) {
  const { options } = ctx;
  return {
    default_generation_settings: {
      params: {
        seed: 4294967295,
        temperature: 0.8,
        top_k: 40,
        top_p: 0.95,
        min_p: 0.05,
        max_tokens: -1,
        n_predict: -1,
        stream: false,
        chat_format: 'Content-only',
        reasoning_format: 'none',
        samplers: ['penalties', 'dry', 'top_n_sigma', 'top_k', 'typ_p', 'top_p', 'min_p', 'xtc', 'temperature'],
        lora: [],
      },
      n_ctx: options.ctx,
    },
    total_slots: options.parallel,
    model_alias: ctx.modelId,
    model_ftype: 'F16',
    model_path: ctx.modelId,
    modalities: { vision: options.vision, video: false, audio: false },
    endpoint_slots: true,
    endpoint_props: false,
    endpoint_metrics: true,
    ui: false,
    chat_template: CHATML_TEMPLATE,
    chat_template_caps: {
      supports_system_role: true,
      supports_tool_calls: false,
      supports_tools: false,
      supports_string_content: true,
      supports_typed_content: false,
    },
    bos_token: '<s>',
    eos_token: '<|im_end|>',
    build_info: LLAMA_SERVER_BUILD,
    is_sleeping: false,
  };
}

/** The fields llama-server adds to a slot once it has run a task: the task, its prompt counts, its sampling, its progress. */
function slotTask(ctx: SimEngineContext) {
  const { params } = simProps(ctx).default_generation_settings;
  return {
    id_task: ctx.state.counters.requests - 1,
    n_prompt_tokens: 0,
    n_prompt_tokens_processed: 0,
    n_prompt_tokens_cache: 0,
    params: {
      ...params,
      n_keep: 0,
      n_discard: 0,
      ignore_eos: false,
      n_probs: 0,
      min_keep: 0,
      timings_per_token: false,
      post_sampling_probs: false,
    },
    next_token: [{ has_next_token: false, has_new_line: false, n_remain: -1, n_decoded: 0 }],
  };
}

/**
 * GET /slots (`--slots`, `reference/llama-server/slots.json`): one entry per parallel slot, with the task fields once
 * the engine has run a request. The sim does not pin a request to a slot, so the first `active` slots are the
 * processing ones.
 */
export function simSlots(ctx: SimEngineContext) {
  const active = ctx.state.activeCount;
  const task = ctx.state.counters.requests > 0 ? slotTask(ctx) : {};
  return Array.from({ length: ctx.options.parallel }, (_, id) => ({
    id,
    n_ctx: ctx.options.ctx,
    speculative: false,
    is_processing: id < active,
    ...task,
  }));
}

/** llama-server's own endpoints besides the OpenAI ones: /props and /slots. */
export function registerLlamaServerRoutes(app: FastifyInstance, ctx: SimEngineContext): void {
  app.get('/props', async () => simProps(ctx));
  app.get('/slots', async () => simSlots(ctx));
}

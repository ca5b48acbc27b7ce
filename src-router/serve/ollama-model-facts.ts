/**
 * What Ollama's `/api/show`, `/api/tags` and `/api/ps` say about a model config: its weights file's size and, for a
 * GGUF, what its header states (architecture, parameters, quantization, context, chat template). Headers are read
 * through the node's `GgufHeaders` (bounded, once per file version); the tensor data is never read.
 */
import { stat } from 'node:fs/promises';
import type { ModelConfig } from '../config';
import { fileName, type GgufHeaders, type GgufSummary, NOT_A_GGUF } from '../engines/gguf-headers';
import type { GgufValue } from '../engines/llama-node/gguf-format';

/** What the facts read from a config (a remote node's record gives the same fields). */
export type FactsConfig = Pick<ModelConfig, 'backend' | 'capabilities' | 'contextsize'> & {
  vllm?: ModelConfig['vllm'];
};

export interface OllamaDetails {
  parent_model: string;
  format: string;
  family: string;
  families: string[] | null;
  parameter_size: string;
  quantization_level: string;
}

export interface OllamaModelFacts {
  /** Bytes of the weights file; 0 when the config names none. */
  size: number;
  modifiedAt: Date | null;
  details: OllamaDetails;
  /** The context window this node serves the model with: the config's, else the GGUF's training context. */
  contextLength: number | null;
  modelInfo: Record<string, unknown>;
  capabilities: string[];
  template: string;
  parameters: string;
  license: string;
  /** Why the weights file's header could not be read (its file name, the limit it went past); absent when it was. */
  headerError?: string;
}

/** GGUF `general.file_type` → the quantization name Ollama shows (llama.cpp's LLAMA_FTYPE_*). */
const FILE_TYPES: Record<number, string> = {
  0: 'F32',
  1: 'F16',
  2: 'Q4_0',
  3: 'Q4_1',
  7: 'Q8_0',
  8: 'Q5_0',
  9: 'Q5_1',
  10: 'Q2_K',
  11: 'Q3_K_S',
  12: 'Q3_K_M',
  13: 'Q3_K_L',
  14: 'Q4_K_S',
  15: 'Q4_K_M',
  16: 'Q5_K_S',
  17: 'Q5_K_M',
  18: 'Q6_K',
  19: 'IQ2_XXS',
  20: 'IQ2_XS',
  21: 'Q2_K_S',
  22: 'IQ3_XS',
  23: 'IQ3_XXS',
  24: 'IQ1_S',
  25: 'IQ4_NL',
  26: 'IQ3_S',
  27: 'IQ3_M',
  28: 'IQ2_S',
  29: 'IQ2_M',
  30: 'IQ4_XS',
  31: 'IQ1_M',
  32: 'BF16',
  36: 'TQ1_0',
  37: 'TQ2_0',
};

/** 7_615_616_512 → `7.6B`, 137_000_000 → `137M`, as Ollama writes parameter sizes. */
export function humanParameters(n: number): string {
  const fmt = (v: number, unit: string, digits: number) =>
    Number.isInteger(v) ? `${v}${unit}` : `${v.toFixed(digits)}${unit}`;
  if (n >= 1e9) return fmt(n / 1e9, 'B', 1);
  if (n >= 1e6) return fmt(n / 1e6, 'M', 2);
  if (n >= 1e3) return `${Math.round(n / 1e3)}K`;
  return String(n);
}

/** Ollama's capability names from a config's capabilities and, where known, its chat template. */
export function ollamaCapabilities(config: Pick<ModelConfig, 'capabilities' | 'backend'>, template: string): string[] {
  const caps = new Set(config.capabilities);
  const out: string[] = [];
  if (caps.has('text') || caps.has('multimodal')) out.push('completion');
  if (caps.has('embedding')) out.push('embedding');
  if (caps.has('multimodal')) out.push('vision');
  // Tool calls: the built-in engine constrains them by grammar; others need a chat template that renders tools.
  if ((caps.has('text') || caps.has('multimodal')) && (config.backend === 'llama-node' || /\btools\b/.test(template)))
    out.push('tools');
  return out;
}

function jsonValue(v: GgufValue): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(jsonValue);
  return v;
}

function parameterCount(h: GgufSummary): number {
  const declared = h.metadata.get('general.parameter_count');
  if (typeof declared === 'number' || typeof declared === 'bigint') return Number(declared);
  return h.tensorParameters;
}

function quantization(h: GgufSummary): string {
  const ft = h.metadata.get('general.file_type');
  if (typeof ft === 'number' && FILE_TYPES[ft]) return FILE_TYPES[ft];
  // No file type: the type most of the weights are stored in.
  return h.tensorType;
}

const str = (v: GgufValue | undefined) => (typeof v === 'string' ? v : '');

function parametersText(contextLength: number | null, h: GgufSummary | undefined): string {
  const lines: string[] = [];
  if (contextLength) lines.push(`num_ctx ${contextLength}`);
  if (h?.eosText) lines.push(`stop ${JSON.stringify(h.eosText)}`);
  return lines.join('\n');
}

/**
 * Facts of one config, from its file's header summary (pure once it is read). Arrays the summary left out (longer
 * than Ollama shows without `verbose`) are null.
 */
export function modelFacts(
  config: FactsConfig,
  file: { size: number; mtime: Date } | null,
  h: GgufSummary | undefined,
): OllamaModelFacts {
  const arch = str(h?.metadata.get('general.architecture')) || config.backend;
  const ggufContext = h?.metadata.get(`${arch}.context_length`);
  const contextLength =
    config.contextsize ??
    config.vllm?.settings.max_model_length ??
    (typeof ggufContext === 'number' ? ggufContext : null);
  const modelInfo: Record<string, unknown> = {};
  if (h) {
    for (const [k, v] of h.metadata) modelInfo[k] = jsonValue(v);
    for (const k of h.omitted.keys()) modelInfo[k] = null;
  }
  modelInfo['general.architecture'] = arch;
  if (h) modelInfo['general.parameter_count'] = parameterCount(h);
  if (contextLength !== null) modelInfo[`${arch}.context_length`] = contextLength;
  const template = str(h?.metadata.get('tokenizer.chat_template'));
  return {
    size: file?.size ?? 0,
    modifiedAt: file?.mtime ?? null,
    details: {
      parent_model: '',
      format: h ? 'gguf' : config.backend,
      family: arch,
      families: [arch],
      parameter_size: h ? humanParameters(parameterCount(h)) : '',
      quantization_level: h ? quantization(h) : '',
    },
    contextLength,
    modelInfo,
    capabilities: ollamaCapabilities(config, template),
    template,
    parameters: parametersText(contextLength, h),
    license: str(h?.metadata.get('general.license')),
  };
}

/** Model facts of configs, their headers read through the node's `GgufHeaders` (bounded, kept per file version). */
export class ModelFactsCache {
  constructor(private readonly headers: GgufHeaders) {}

  /**
   * `verbose`: long arrays (vocabularies) in full, as Ollama's `/api/show` with `verbose: true` (read again, not
   * kept). A weights file that is not a GGUF has a size and no header facts; one whose header cannot be read says why
   * in `headerError`.
   */
  async facts(config: ModelConfig, opts: { verbose?: boolean } = {}): Promise<OllamaModelFacts> {
    const path = config.model;
    if (!path) return modelFacts(config, null, undefined);
    let read = await this.headers.summary(path);
    if (opts.verbose && 'summary' in read) read = await this.headers.full(path);
    if ('summary' in read)
      return modelFacts(config, { size: read.summary.fileSize, mtime: read.summary.mtime }, read.summary);
    const file = await stat(path).catch(() => null);
    const facts = modelFacts(config, file, undefined);
    if (read.error === NOT_A_GGUF || !file) return facts;
    return { ...facts, headerError: `the weights file '${fileName(path)}': ${read.error}` };
  }
}

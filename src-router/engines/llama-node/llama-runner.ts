/** One loaded GGUF model: a context with `parallel` sequences handed out FIFO, chat / completion / embeddings over it. */
import type { EngineMetrics } from './engine-metrics';
import type {
  ChatHistoryItem,
  ChatWrapper,
  GenerationOptions,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaEmbeddingContext,
  LlamaGrammar,
  LlamaModel,
  NodeLlamaCpp,
  StopReason,
} from './llama-api';
import {
  type ChatMessage,
  type ChatRequest,
  type CompletionRequest,
  EngineHttpError,
  messageText,
  stopList,
} from './openai-requests';
import { getSharedLlama, loadNodeLlamaCpp } from './runtime';
import { SlotPool } from './slot-pool';
import {
  callInstructions,
  formatPlan,
  grammarFor,
  nativeFunctions,
  newCallId,
  type OutputPlan,
  outputPlan,
  parseCall,
  type ToolCall,
} from './structured-output';

export interface LlamaRunnerOptions {
  modelPath: string;
  /** tokens per sequence; default: the model's trained context, at most 4096 */
  contextSize?: number;
  parallel: number;
  threads: number;
  useMmap: boolean;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls';

export interface GenerationJob {
  history?: ChatHistoryItem[];
  prompt?: string;
  promptTokens: number;
  maxTokens: number;
  temperature: number;
  topP?: number;
  seed?: number;
  stop: string[];
  /** What the output must be (free text, JSON, a function call); `grammar` enforces it where a grammar does. */
  plan: OutputPlan;
  grammar?: LlamaGrammar;
}

export interface GenerationResult {
  text: string;
  finishReason: FinishReason;
  promptTokens: number;
  completionTokens: number;
  /** Function calls the model made (finish reason `tool_calls`). */
  toolCalls?: ToolCall[];
  /** Time on this job alone, from the moment it had its sequence: to its first text (prompt), then the rest (ms). */
  promptMs: number;
  predictedMs: number;
}

const DEFAULT_TEMPERATURE = 0.8;
const MAX_DEFAULT_CONTEXT = 4096;

function finishReason(stop: StopReason): FinishReason {
  return stop === 'maxTokens' ? 'length' : 'stop';
}

export class LlamaRunner {
  private readonly pool: SlotPool<LlamaContextSequence>;
  private embedding: Promise<LlamaEmbeddingContext> | undefined;
  private embedQueue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly lib: NodeLlamaCpp,
    private readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    private readonly chatWrapper: ChatWrapper,
    private readonly threads: number,
    private readonly metrics: EngineMetrics,
  ) {
    const sequences: LlamaContextSequence[] = [];
    for (let i = 0; i < context.totalSequences; i++) sequences.push(context.getSequence());
    this.pool = new SlotPool(sequences);
  }

  static async load(options: LlamaRunnerOptions, metrics: EngineMetrics): Promise<LlamaRunner> {
    const lib = await loadNodeLlamaCpp();
    const llama = await getSharedLlama(lib);
    const model = await llama.loadModel({ modelPath: options.modelPath, useMmap: options.useMmap, gpuLayers: 0 });
    try {
      const contextSize =
        options.contextSize ?? Math.min(model.trainContextSize || MAX_DEFAULT_CONTEXT, MAX_DEFAULT_CONTEXT);
      const context = await model.createContext({ contextSize, sequences: options.parallel, threads: options.threads });
      // Resolved once per model: resolving inspects the model's template and tokens, too slow per request.
      const chatWrapper = lib.resolveChatWrapper(model);
      return new LlamaRunner(lib, llama, model, context, chatWrapper, options.threads, metrics);
    } catch (err) {
      await model.dispose();
      throw err;
    }
  }

  get contextSize(): number {
    return this.context.contextSize;
  }
  get embeddingSize(): number {
    return this.model.embeddingVectorSize;
  }
  get chatWrapperName(): string {
    return this.chatWrapper.wrapperName;
  }
  slotGauges() {
    return { active: this.pool.active, queued: this.pool.queued, total: this.pool.size };
  }

  private budget(promptTokens: number, requested: number | undefined): number {
    const room = this.contextSize - promptTokens;
    if (room <= 0)
      throw new EngineHttpError(
        400,
        `the request has ${promptTokens} prompt tokens, more than the context size ${this.contextSize}`,
      );
    return requested === undefined ? room : Math.min(requested, room);
  }

  async prepareChat(req: ChatRequest): Promise<GenerationJob> {
    const plan = outputPlan(req);
    const history = req.messages.map(historyItem);
    // A forced call is told which functions there are; the grammar makes its answer one of them.
    if (plan.kind === 'call') history.unshift({ type: 'system', text: callInstructions(plan.tools) });
    const functions =
      plan.kind === 'functions'
        ? { availableFunctions: nativeFunctions(plan.tools), documentFunctionParams: true }
        : {};
    const promptTokens = this.chatWrapper
      .generateContextState({ chatHistory: history, ...functions })
      .contextText.tokenize(this.model.tokenizer).length;
    const grammar = await grammarFor(this.llama, plan);
    return {
      ...this.sampling(req),
      history,
      promptTokens,
      maxTokens: this.budget(promptTokens, req.max_completion_tokens ?? req.max_tokens),
      plan,
      grammar,
    };
  }

  async prepareCompletion(req: CompletionRequest): Promise<GenerationJob> {
    const prompt = Array.isArray(req.prompt) ? req.prompt[0] : req.prompt;
    const promptTokens = this.model.tokenize(prompt).length + (this.model.tokens.shouldPrependBosToken ? 1 : 0);
    const plan = formatPlan(req.response_format);
    const grammar = await grammarFor(this.llama, plan);
    return {
      ...this.sampling(req),
      prompt,
      promptTokens,
      maxTokens: this.budget(promptTokens, req.max_tokens),
      plan,
      grammar,
    };
  }

  private sampling(req: ChatRequest | CompletionRequest) {
    return {
      temperature: req.temperature ?? DEFAULT_TEMPERATURE,
      topP: req.top_p,
      seed: req.seed,
      stop: stopList(req.stop),
    };
  }

  /** Waits (FIFO) for a sequence, generates, frees the sequence. Rejects when `signal` aborts, waiting or generating. */
  generate(job: GenerationJob, signal: AbortSignal, onText: (text: string) => void): Promise<GenerationResult> {
    return this.pool.with(signal, async (sequence) => {
      const before = sequence.tokenMeter.usedOutputTokens;
      const started = performance.now();
      let firstAt: number | null = null;
      const timed = (text: string) => {
        if (firstAt === null && text !== '') firstAt = performance.now();
        // A forced call's JSON is the call, not text: it is answered as tool_calls at the end.
        if (job.plan.kind !== 'call') onText(text);
      };
      try {
        const out = await this.runOn(sequence, job, signal, timed);
        const ended = performance.now();
        const promptMs = (firstAt ?? ended) - started;
        return {
          ...out,
          promptTokens: job.promptTokens,
          completionTokens: sequence.tokenMeter.usedOutputTokens - before,
          promptMs,
          predictedMs: ended - started - promptMs,
        };
      } finally {
        this.metrics.generatedTokens += sequence.tokenMeter.usedOutputTokens - before;
        this.metrics.promptTokens += job.promptTokens;
      }
    });
  }

  private async runOn(
    sequence: LlamaContextSequence,
    job: GenerationJob,
    signal: AbortSignal,
    onText: (text: string) => void,
  ) {
    if (job.maxTokens === 0) return { text: '', finishReason: 'length' as const };
    const options: GenerationOptions = {
      onTextChunk: onText,
      signal,
      stopOnAbortSignal: false,
      maxTokens: job.maxTokens,
      temperature: job.temperature,
      topP: job.topP,
      seed: job.seed,
      customStopTriggers: job.stop.length ? job.stop : undefined,
      grammar: job.grammar,
      ...(job.plan.kind === 'functions'
        ? {
            functions: nativeFunctions(job.plan.tools),
            documentFunctionParams: true,
            maxParallelFunctionCalls: job.plan.parallel ? undefined : 1,
          }
        : {}),
    };
    const generator = job.history
      ? new this.lib.LlamaChat({ contextSequence: sequence, chatWrapper: this.chatWrapper, autoDisposeSequence: false })
      : new this.lib.LlamaCompletion({ contextSequence: sequence, autoDisposeSequence: false });
    try {
      if (!('generateResponse' in generator)) {
        const r = await generator.generateCompletionWithMeta(job.prompt ?? '', options);
        return { text: r.response, finishReason: finishReason(r.metadata.stopReason) };
      }
      const r = await generator.generateResponse(job.history ?? [], options);
      const reason = finishReason(r.metadata.stopReason);
      if (job.plan.kind === 'call') {
        const call = reason === 'length' ? undefined : parseCall(r.response);
        return call
          ? { text: '', finishReason: 'tool_calls' as const, toolCalls: [call] }
          : { text: r.response, finishReason: reason };
      }
      const calls = (r.functionCalls ?? []).map(
        (c): ToolCall => ({ id: newCallId(), name: c.functionName, arguments: JSON.stringify(c.params ?? {}) }),
      );
      return calls.length
        ? { text: r.response, finishReason: 'tool_calls' as const, toolCalls: calls }
        : { text: r.response, finishReason: reason };
    } finally {
      generator.dispose({ disposeSequence: false });
    }
  }

  /** One vector per input; the embedding context is created on first use and used by one request at a time. */
  embed(inputs: string[]): Promise<{ vectors: number[][]; promptTokens: number }> {
    const run = this.embedQueue.then(async () => {
      this.embedding ??= this.model.createEmbeddingContext({ contextSize: this.contextSize, threads: this.threads });
      const ctx = await this.embedding.catch((err: unknown) => {
        this.embedding = undefined;
        throw err;
      });
      const vectors: number[][] = [];
      let promptTokens = 0;
      for (const input of inputs) {
        promptTokens += this.model.tokenize(input).length;
        vectors.push([...(await ctx.getEmbeddingFor(input)).vector]);
      }
      this.metrics.promptTokens += promptTokens;
      return { vectors, promptTokens };
    });
    this.embedQueue = run.catch(() => undefined);
    return run;
  }

  /** Rejects queued requests and frees the model; in-flight generations must have been aborted first. */
  async close(): Promise<void> {
    this.pool.close();
    await this.embedQueue;
    const embedding = await this.embedding?.catch(() => undefined);
    await embedding?.dispose();
    await this.context.dispose();
    await this.model.dispose();
  }
}

/** A chat message as node-llama-cpp history. Function calls and their results are written out as text, which any chat wrapper renders. */
function historyItem(m: ChatMessage): ChatHistoryItem {
  const text = messageText(m);
  if (m.role === 'system' || m.role === 'developer') return { type: 'system', text };
  if (m.role === 'assistant') {
    const calls = (m.tool_calls ?? []).map((c) =>
      JSON.stringify({ name: c.function.name, arguments: parseArguments(c.function.arguments) }),
    );
    return { type: 'model', response: [[text, ...calls].filter((t) => t !== '').join('\n')] };
  }
  if (m.role === 'tool') return { type: 'user', text: `Result of function call ${m.tool_call_id ?? ''}: ${text}` };
  return { type: 'user', text };
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

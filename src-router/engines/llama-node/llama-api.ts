/**
 * The small part of node-llama-cpp 3.21.1 this engine uses, typed locally: the package lives in
 * resources/llama-runtime (its own install) and is loaded at run time, so the project type-checks without it.
 */

export type LlamaToken = number;

export interface LlamaTokenMeter {
  readonly usedInputTokens: number;
  readonly usedOutputTokens: number;
}

export interface LlamaContextSequence {
  readonly tokenMeter: LlamaTokenMeter;
  readonly contextSize: number;
  dispose(): Promise<void>;
}

export interface LlamaContext {
  readonly contextSize: number;
  readonly totalSequences: number;
  getSequence(): LlamaContextSequence;
  dispose(): Promise<void>;
}

export interface LlamaEmbeddingContext {
  getEmbeddingFor(input: string): Promise<{ readonly vector: readonly number[] }>;
  dispose(): Promise<void>;
}

export interface LlamaTokenizer {
  (text: string, specialTokens?: boolean): LlamaToken[];
}

export interface LlamaModel {
  readonly tokenizer: LlamaTokenizer;
  readonly trainContextSize: number;
  readonly embeddingVectorSize: number;
  readonly tokens: { readonly shouldPrependBosToken: boolean };
  tokenize(text: string, specialTokens?: boolean): LlamaToken[];
  createContext(options: {
    contextSize: number;
    sequences: number;
    threads: number;
    batchSize?: number;
  }): Promise<LlamaContext>;
  createEmbeddingContext(options: { contextSize?: number; threads: number }): Promise<LlamaEmbeddingContext>;
  dispose(): Promise<void>;
}

/** A grammar constraining generation (GBNF), made from a JSON Schema or a built-in one. Opaque here. */
export interface LlamaGrammar {
  readonly grammar: string;
  readonly stopGenerationTriggers: readonly unknown[];
  readonly trimWhitespaceSuffix: boolean;
}

/** node-llama-cpp's JSON Schema subset (GbnfJsonSchema); what it does not know it rejects or ignores. */
export type GbnfJsonSchema = Readonly<Record<string, unknown>>;

export interface Llama {
  loadModel(options: { modelPath: string; useMmap?: boolean; gpuLayers?: number }): Promise<LlamaModel>;
  createGrammarForJsonSchema(schema: GbnfJsonSchema): Promise<LlamaGrammar>;
  getGrammarFor(type: 'json'): Promise<LlamaGrammar>;
  /** A grammar from GBNF text; the triggers and whitespace trimming are taken over from the grammar it rewrites. */
  createGrammar(options: {
    grammar: string;
    stopGenerationTriggers?: readonly unknown[];
    trimWhitespaceSuffix?: boolean;
  }): Promise<LlamaGrammar>;
  dispose(): Promise<void>;
}

/** Functions the model may call (native function calling of the chat wrapper); params constrain the call's arguments. */
export type ChatModelFunctions = Readonly<
  Record<string, { readonly description?: string; readonly params?: GbnfJsonSchema }>
>;

export type ChatHistoryItem =
  | { type: 'system'; text: string }
  | { type: 'user'; text: string }
  | { type: 'model'; response: string[] };

export interface LlamaText {
  tokenize(tokenizer: LlamaTokenizer): LlamaToken[];
}

export interface ChatWrapper {
  readonly wrapperName: string;
  generateContextState(options: {
    chatHistory: ChatHistoryItem[];
    availableFunctions?: ChatModelFunctions;
    documentFunctionParams?: boolean;
  }): { contextText: LlamaText };
}

export type StopReason =
  | 'eogToken'
  | 'stopGenerationTrigger'
  | 'customStopTrigger'
  | 'maxTokens'
  | 'abort'
  | 'functionCalls';

/** Sampling and streaming options shared by LlamaChat.generateResponse and LlamaCompletion.generateCompletionWithMeta. */
export interface GenerationOptions {
  onTextChunk?: (text: string) => void;
  signal?: AbortSignal;
  stopOnAbortSignal?: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  seed?: number;
  customStopTriggers?: readonly string[];
  /** Constrains the whole answer (LlamaChat and LlamaCompletion); never together with `functions`. */
  grammar?: LlamaGrammar;
  /** LlamaChat only: functions the model may call; it stops with `functionCalls` when it calls one. */
  functions?: ChatModelFunctions;
  documentFunctionParams?: boolean;
  maxParallelFunctionCalls?: number;
}

export interface LlamaChat {
  generateResponse(
    history: ChatHistoryItem[],
    options: GenerationOptions,
  ): Promise<{
    response: string;
    functionCalls?: { functionName: string; params: unknown }[];
    metadata: { stopReason: StopReason };
  }>;
  dispose(options?: { disposeSequence?: boolean }): void;
}

export interface LlamaCompletion {
  generateCompletionWithMeta(
    input: string,
    options: GenerationOptions,
  ): Promise<{ response: string; metadata: { stopReason: StopReason } }>;
  dispose(options?: { disposeSequence?: boolean }): void;
}

/** The module object of node-llama-cpp, as far as this engine uses it. */
export interface NodeLlamaCpp {
  getLlama(options: {
    gpu: false;
    build: 'never';
    logLevel?: 'disabled' | 'fatal' | 'error' | 'warn' | 'info';
    progressLogs?: boolean;
  }): Promise<Llama>;
  resolveChatWrapper(model: LlamaModel): ChatWrapper;
  LlamaChat: new (options: {
    contextSequence: LlamaContextSequence;
    chatWrapper: ChatWrapper;
    autoDisposeSequence?: boolean;
  }) => LlamaChat;
  LlamaCompletion: new (options: {
    contextSequence: LlamaContextSequence;
    autoDisposeSequence?: boolean;
  }) => LlamaCompletion;
}

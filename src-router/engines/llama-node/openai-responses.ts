/** Response bodies and stream chunks of the OpenAI-compatible endpoints. */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FinishReason, GenerationResult } from './llama-runner';
import type { ToolCall } from './structured-output';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export function usageOf(r: { promptTokens: number; completionTokens: number }): Usage {
  return {
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    total_tokens: r.promptTokens + r.completionTokens,
  };
}

/** llama-server's `timings` object: the engine's own time on the job (the router's cost fits read it, PRICE-2). */
export function timingsOf(r: GenerationResult) {
  const perToken = r.completionTokens > 0 ? r.predictedMs / r.completionTokens : 0;
  return {
    prompt_n: r.promptTokens,
    prompt_ms: r.promptMs,
    prompt_per_token_ms: r.promptTokens > 0 ? r.promptMs / r.promptTokens : 0,
    predicted_n: r.completionTokens,
    predicted_ms: r.predictedMs,
    predicted_per_token_ms: perToken,
    predicted_per_second: perToken > 0 ? 1000 / perToken : 0,
  };
}

/** Identity shared by every chunk of one response. */
export interface ResponseHead {
  id: string;
  created: number;
  model: string;
}

export function responseHead(prefix: 'chatcmpl' | 'cmpl', model: string): ResponseHead {
  return { id: `${prefix}-${randomUUID().replaceAll('-', '')}`, created: Math.floor(Date.now() / 1000), model };
}

export function chatCompletion(head: ResponseHead, r: GenerationResult) {
  return {
    ...head,
    object: 'chat.completion' as const,
    choices: [{ index: 0, message: assistantMessage(r), logprobs: null, finish_reason: r.finishReason }],
    usage: usageOf(r),
    timings: timingsOf(r),
  };
}

/** The answer's message: its text, and its function calls (content null when it is only calls, as OpenAI sends it). */
function assistantMessage(r: GenerationResult) {
  if (!r.toolCalls?.length) return { role: 'assistant' as const, content: r.text };
  return {
    role: 'assistant' as const,
    content: r.text || null,
    tool_calls: r.toolCalls.map((c) => ({
      id: c.id,
      type: 'function' as const,
      function: { name: c.name, arguments: c.arguments },
    })),
  };
}

/** Function calls in a stream chunk's delta: whole, one entry per call. */
export function toolCallsDelta(calls: ToolCall[]) {
  return calls.map((c, index) => ({
    index,
    id: c.id,
    type: 'function' as const,
    function: { name: c.name, arguments: c.arguments },
  }));
}

export function chatChunk(
  head: ResponseHead,
  delta: { role?: 'assistant'; content?: string; tool_calls?: ReturnType<typeof toolCallsDelta> },
  finishReason: FinishReason | null,
) {
  return {
    ...head,
    object: 'chat.completion.chunk' as const,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

export function textCompletion(head: ResponseHead, r: GenerationResult) {
  return {
    ...head,
    object: 'text_completion' as const,
    choices: [{ index: 0, text: r.text, logprobs: null, finish_reason: r.finishReason }],
    usage: usageOf(r),
    timings: timingsOf(r),
  };
}

export function textChunk(head: ResponseHead, text: string, finishReason: FinishReason | null) {
  return {
    ...head,
    object: 'text_completion' as const,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason }],
  };
}

/** The last chunk of a stream when the client asked for usage: no choices, only usage. */
export function usageChunk(
  head: ResponseHead,
  object: 'chat.completion.chunk' | 'text_completion',
  r: GenerationResult,
) {
  return { ...head, object, choices: [], usage: usageOf(r) };
}

/** Float vectors as OpenAI's base64 encoding: little-endian float32 bytes. */
export function base64Vector(vector: readonly number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

export function embeddingList(model: string, vectors: number[][], promptTokens: number, format: 'float' | 'base64') {
  return {
    object: 'list' as const,
    data: vectors.map((v, index) => ({
      object: 'embedding' as const,
      index,
      embedding: format === 'base64' ? base64Vector(v) : v,
    })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

/** A server-sent-events writer over a raw response; writes nothing once the client is gone. */
export class SseWriter {
  constructor(private readonly res: ServerResponse) {}

  open(): void {
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    this.res.flushHeaders();
  }

  get gone(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  send(data: unknown): void {
    if (!this.gone) this.res.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  done(): void {
    if (!this.gone) this.res.end('data: [DONE]\n\n');
  }

  end(): void {
    if (!this.gone) this.res.end();
  }
}

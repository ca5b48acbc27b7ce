/**
 * llama-node: an OpenAI-compatible HTTP server over node-llama-cpp serving one GGUF model. It listens before the
 * model loads (/health answers 503 meanwhile), runs `parallel` sequences and queues the rest FIFO, and aborts a
 * generation whose client went away.
 */

import type { AddressInfo } from 'node:net';
import { basename } from 'node:path';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { hasImageInput } from '../../contract/client-requests';
import { EngineMetrics } from './engine-metrics';
import { type GenerationResult, LlamaRunner } from './llama-runner';
import {
  chatRequestSchema,
  completionRequestSchema,
  EngineHttpError,
  embeddingRequestSchema,
  errorBody,
  parseBody,
} from './openai-requests';
import {
  chatChunk,
  chatCompletion,
  embeddingList,
  responseHead,
  SseWriter,
  textChunk,
  textCompletion,
  timingsOf,
  toolCallsDelta,
  usageChunk,
} from './openai-responses';

export interface LlamaEngineOptions {
  /** default 127.0.0.1 */
  host?: string;
  /** 0 picks a free port */
  port: number;
  modelPath: string;
  /** model id in responses when the request names none; default: the file name without .gguf */
  alias?: string;
  /** tokens per sequence; default: the model's trained context, at most 4096 */
  contextSize?: number;
  /** sequences generating at once; default 1 */
  parallel?: number;
  /** threads per evaluation; default 1 (2 threads on 2 cores collapse throughput) */
  threads?: number;
  /** default true; false reads the whole file into memory, so load time grows with size */
  useMmap?: boolean;
  /** loading starts once this settles (tests use it to observe the loading state) */
  loadGate?: Promise<unknown>;
}

export interface LlamaEngineInfo {
  loadMs: number;
  contextSize: number;
  parallel: number;
  embeddingSize: number;
  chatWrapper: string;
}

export interface LlamaEngineHandle {
  port: number;
  url: string;
  alias: string;
  metrics: EngineMetrics;
  /** resolves when the model serves; rejects when loading failed (the server keeps answering /health with 500) */
  ready: Promise<LlamaEngineInfo>;
  close(): Promise<void>;
}

/** node-llama-cpp here loads no vision projector: an image part (or an Ollama `images` list) is refused up front. */
export const IMAGE_NOT_SUPPORTED = 'image input is not supported: llama-engine serves text only (no vision projector)';

type EngineState =
  | { status: 'loading' }
  | { status: 'ready'; runner: LlamaRunner }
  | { status: 'failed'; error: Error }
  | { status: 'closed' };

export async function startLlamaEngine(options: LlamaEngineOptions): Promise<LlamaEngineHandle> {
  const alias = options.alias ?? basename(options.modelPath).replace(/\.gguf$/i, '');
  const parallel = options.parallel ?? 1;
  const metrics = new EngineMetrics();
  const inflight = new Set<AbortController>();
  const generations = new Set<Promise<unknown>>();
  let state: EngineState = { status: 'loading' };

  const runner = (): LlamaRunner => {
    if (state.status === 'ready') return state.runner;
    if (state.status === 'loading') throw new EngineHttpError(503, 'Loading model');
    if (state.status === 'failed') throw new EngineHttpError(500, `model failed to load: ${state.error.message}`);
    throw new EngineHttpError(503, 'engine is shutting down');
  };
  const track = <T>(p: Promise<T>): Promise<T> => {
    generations.add(p);
    void p.finally(() => generations.delete(p)).catch(() => undefined);
    return p;
  };

  const app = Fastify({ logger: false, forceCloseConnections: true, bodyLimit: 16 * 1024 * 1024 });

  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    metrics.errors++;
    if (reply.raw.destroyed) return;
    if (err instanceof EngineHttpError)
      return reply.code(err.status).send(errorBody(err.status, err.message, err.type));
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    const type = status === 500 ? 'server_error' : 'invalid_request_error';
    return reply
      .code(status)
      .send(
        errorBody(
          status,
          status === 400 && /JSON/i.test(err.message) ? `malformed JSON: ${err.message}` : err.message,
          type,
        ),
      );
  });
  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send(errorBody(404, `no route ${req.method} ${req.url}`, 'not_found_error')),
  );

  app.get('/health', async (_req, reply) => {
    if (state.status === 'ready') return { status: 'ok' };
    if (state.status === 'failed')
      return reply.code(500).send(errorBody(500, `Failed to load model: ${state.error.message}`, 'server_error'));
    return reply
      .code(503)
      .send(errorBody(503, state.status === 'loading' ? 'Loading model' : 'Shutting down', 'unavailable_error'));
  });

  app.get('/v1/models', async () => ({
    object: 'list',
    data: [
      {
        id: alias,
        object: 'model',
        created: Math.floor(Date.now() / 1000),
        owned_by: 'routerdesk',
        status: state.status,
      },
    ],
  }));

  app.get('/metrics', async (_req, reply) => {
    const slots = state.status === 'ready' ? state.runner.slotGauges() : { active: 0, queued: 0, total: parallel };
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(metrics.render(slots, state.status === 'ready'));
  });

  async function generation(kind: 'chat' | 'completion', request: FastifyRequest, reply: FastifyReply) {
    const finish = metrics.begin(kind);
    const abort = new AbortController();
    const onClose = () => {
      if (!reply.raw.writableFinished) abort.abort(new Error('client disconnected'));
    };
    reply.raw.on('close', onClose);
    inflight.add(abort);
    try {
      const engine = runner();
      const body =
        kind === 'chat' ? parseBody(chatRequestSchema, request.body) : parseBody(completionRequestSchema, request.body);
      if (kind === 'chat' && hasImageInput(request.body as Record<string, unknown>))
        throw new EngineHttpError(400, IMAGE_NOT_SUPPORTED);
      const job = 'messages' in body ? await engine.prepareChat(body) : await engine.prepareCompletion(body);
      const head = responseHead(kind === 'chat' ? 'chatcmpl' : 'cmpl', body.model ?? alias);
      if (!body.stream) {
        const result = await track(engine.generate(job, abort.signal, () => undefined));
        return kind === 'chat' ? chatCompletion(head, result) : textCompletion(head, result);
      }
      reply.hijack();
      const sse = new SseWriter(reply.raw);
      sse.open();
      let first = true;
      const onText = (text: string) => {
        if (text === '') return;
        sse.send(
          kind === 'chat'
            ? chatChunk(head, first ? { role: 'assistant', content: text } : { content: text }, null)
            : textChunk(head, text, null),
        );
        first = false;
      };
      let result: GenerationResult;
      try {
        result = await track(engine.generate(job, abort.signal, onText));
      } catch (err) {
        if (abort.signal.aborted) throw err;
        metrics.errors++;
        const status = err instanceof EngineHttpError ? err.status : 500;
        sse.send(errorBody(status, (err as Error).message, status === 500 ? 'server_error' : 'invalid_request_error'));
        sse.done();
        return reply;
      }
      if (result.toolCalls?.length) {
        sse.send(
          chatChunk(
            head,
            { ...(first ? { role: 'assistant' as const } : {}), tool_calls: toolCallsDelta(result.toolCalls) },
            null,
          ),
        );
        first = false;
      }
      // As llama-server does, the last chunk (the one with finish_reason) carries the engine's timings.
      const final =
        kind === 'chat'
          ? chatChunk(head, first ? { role: 'assistant', content: '' } : {}, result.finishReason)
          : textChunk(head, '', result.finishReason);
      sse.send({ ...final, timings: timingsOf(result) });
      if (body.stream_options?.include_usage)
        sse.send(usageChunk(head, kind === 'chat' ? 'chat.completion.chunk' : 'text_completion', result));
      sse.done();
      return reply;
    } catch (err) {
      if (!abort.signal.aborted) throw err;
      metrics.cancelled++;
      if (!reply.sent) reply.hijack();
      reply.raw.destroy();
      return reply;
    } finally {
      finish();
      inflight.delete(abort);
      reply.raw.off('close', onClose);
    }
  }

  app.post('/v1/chat/completions', (req, reply) => generation('chat', req, reply));
  app.post('/v1/completions', (req, reply) => generation('completion', req, reply));
  app.post('/v1/embeddings', async (request) => {
    const finish = metrics.begin('embedding');
    try {
      const engine = runner();
      const body = parseBody(embeddingRequestSchema, request.body);
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      if (inputs.some((s) => s.length === 0)) throw new EngineHttpError(400, 'input must not contain empty strings');
      const { vectors, promptTokens } = await track(engine.embed(inputs));
      return embeddingList(body.model ?? alias, vectors, promptTokens, body.encoding_format ?? 'float');
    } finally {
      finish();
    }
  });

  await app.listen({ host: options.host ?? '127.0.0.1', port: options.port });
  const port = (app.server.address() as AddressInfo).port;

  const ready = (async (): Promise<LlamaEngineInfo> => {
    await options.loadGate;
    const started = Date.now();
    const loaded = await LlamaRunner.load(
      {
        modelPath: options.modelPath,
        contextSize: options.contextSize,
        parallel,
        threads: options.threads ?? 1,
        useMmap: options.useMmap ?? true,
      },
      metrics,
    );
    if ((state as EngineState).status === 'closed') {
      await loaded.close();
      throw new Error('engine closed while loading');
    }
    state = { status: 'ready', runner: loaded };
    return {
      loadMs: Date.now() - started,
      contextSize: loaded.contextSize,
      parallel,
      embeddingSize: loaded.embeddingSize,
      chatWrapper: loaded.chatWrapperName,
    };
  })();
  ready.catch((error: unknown) => {
    if (state.status === 'loading')
      state = { status: 'failed', error: error instanceof Error ? error : new Error(String(error)) };
  });

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const previous = state;
      state = { status: 'closed' };
      for (const abort of inflight) abort.abort(new Error('engine closing'));
      await app.close();
      await Promise.allSettled([...generations]);
      if (previous.status === 'ready') await previous.runner.close();
      await ready.catch(() => undefined);
    })());

  return { port, url: `http://${options.host ?? '127.0.0.1'}:${port}`, alias, metrics, ready, close };
}

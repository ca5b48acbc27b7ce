import type { AddressInfo } from 'node:net';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance } from 'fastify';
import type { SimEngineContext } from './context';
import { LOADING_BODY, SimCrashedError, sendError, WHISPER_LOADING_BODY } from './errors';
import { PROMETHEUS_CONTENT_TYPE, renderMetrics, type SimStats, simStats } from './metrics';
import { resolveSimEngineOptions, type SimEngineOptions, type SimEngineOptionsInput } from './options';
import { registerKoboldRoutes } from './routes-kobold';
import { registerLlamaServerRoutes } from './routes-llama-server';
import { registerOpenAIRoutes } from './routes-openai';
import { registerSdRoutes } from './routes-sd';
import { registerOpenAITranscriptionRoute, registerWhisperRoutes } from './routes-whisper';
import { SeenRing } from './seen';
import { EngineState } from './state';

export interface SimEngineHandle {
  readonly host: string;
  readonly port: number;
  /** `http://host:port`, IPv6 hosts in brackets. */
  readonly url: string;
  readonly options: SimEngineOptions;
  /** Resolves once the simulated load is over and health reports ready. */
  readonly loaded: Promise<void>;
  stats(): SimStats;
  /** Stops listening and drops every connection (in-flight requests count as cancelled). Idempotent. */
  close(): Promise<void>;
}

export interface SimEngineHooks {
  /**
   * Called when a request crashes the engine (`fail: crash_on_request`, `sim_fail: "crash"`).
   * Default: `process.exit(code)`. If it returns, the engine behaves as a dead process would:
   * every connection is dropped and it stops listening.
   */
  onCrash?: (code: number) => void;
}

/** Paths that answer while the model loads. */
const ALWAYS_AVAILABLE = new Set(['/metrics', '/sim/stats', '/sim/seen']);

/** A multiple of load_time the `slow_health` failure keeps health at 503. */
export const SLOW_HEALTH_FACTOR = 20;

const MAX_BODY_BYTES = 64 * 1024 * 1024;
const MAX_UPLOAD_BYTES = 512 * 1024 * 1024;

const urlHost = (host: string) => (host.includes(':') ? `[${host}]` : host);

/**
 * Starts a sim engine on options.host:options.port (0 picks a port). It listens first, then
 * "loads" for load_time (health 503), then serves. Throws SimCrashedError for `fail: crash_on_start`.
 */
export async function startSimEngine(
  input: SimEngineOptionsInput | SimEngineOptions,
  hooks: SimEngineHooks = {},
): Promise<SimEngineHandle> {
  const options = resolveSimEngineOptions(input as SimEngineOptionsInput);
  if (options.fail === 'crash_on_start')
    throw new SimCrashedError('sim-engine: simulated crash on start (fail=crash_on_start)');

  const app = Fastify({ logger: false, forceCloseConnections: true, bodyLimit: MAX_BODY_BYTES });
  let isLoaded = false;
  let loadTimer: NodeJS.Timeout | undefined;
  let closing: Promise<void> | undefined;
  const close = () => {
    clearTimeout(loadTimer);
    closing ??= app.close().then(() => undefined);
    return closing;
  };

  const ctx: SimEngineContext = {
    options,
    state: new EngineState(options.parallel, options.kv_pages),
    seen: new SeenRing(),
    loaded: () => isLoaded,
    scaled: (ms) => ms / options.time_scale,
    modelId: options.shape === 'koboldcpp' ? `koboldcpp/${options.alias}` : options.alias,
    crash: (code) => {
      (hooks.onCrash ?? ((c: number) => process.exit(c)))(code);
      app.server.closeAllConnections();
      void close();
    },
  };

  await buildApp(app, ctx);
  await app.listen({ host: options.host, port: options.port });
  const port = (app.server.address() as AddressInfo).port;

  const loaded = new Promise<void>((resolve) => {
    const loadMs = ctx.scaled(options.load_time) * (options.fail === 'slow_health' ? SLOW_HEALTH_FACTOR : 1);
    loadTimer = setTimeout(() => {
      isLoaded = true;
      resolve();
    }, loadMs);
  });

  return {
    host: options.host,
    port,
    url: `http://${urlHost(options.host)}:${port}`,
    options,
    loaded,
    stats: () => simStats(ctx),
    close,
  };
}

async function buildApp(app: FastifyInstance, ctx: SimEngineContext): Promise<void> {
  const { shape } = ctx.options;
  const loadingBody = shape === 'whisper-server' ? WHISPER_LOADING_BODY : LOADING_BODY;

  app.setErrorHandler((err: { statusCode?: number; message?: string }, _request, reply) => {
    const status = typeof err.statusCode === 'number' && err.statusCode >= 400 ? err.statusCode : 500;
    return sendError(reply, status, err.message || 'internal error');
  });
  // Like llama-server, read any body that is not multipart as JSON, whatever its content type says.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, text, done) => {
    const raw = String(text);
    if (raw.trim() === '') return done(null, {});
    try {
      done(null, JSON.parse(raw));
    } catch (err) {
      done(Object.assign(new Error(`invalid JSON body: ${(err as Error).message}`), { statusCode: 400 }), undefined);
    }
  });
  app.setNotFoundHandler((_request, reply) => sendError(reply, 404, 'File Not Found', 'not_found_error'));

  app.addHook('onRequest', async (request, reply) => {
    if (ctx.loaded() || ALWAYS_AVAILABLE.has(request.url.split('?')[0])) return;
    return reply.code(503).send(loadingBody);
  });

  app.get('/metrics', async (_request, reply) => reply.type(PROMETHEUS_CONTENT_TYPE).send(renderMetrics(ctx)));
  app.get('/sim/stats', async () => simStats(ctx));
  // Test hook: which requests this engine received (prompt heads) and how each went, the last SEEN_CAPACITY.
  app.get('/sim/seen', async () => ({
    pid: process.pid,
    total: ctx.seen.total,
    capacity: ctx.seen.capacity,
    entries: ctx.seen.list(),
  }));

  if (shape === 'whisper-server' || shape === 'koboldcpp') {
    await app.register(multipart, { limits: { fileSize: MAX_UPLOAD_BYTES, files: 4, fields: 64 } });
  }

  if (shape !== 'koboldcpp') app.get('/health', async () => ({ status: 'ok' }));

  switch (shape) {
    case 'llama-server':
      registerOpenAIRoutes(app, ctx, 'llamacpp');
      registerLlamaServerRoutes(app, ctx);
      break;
    case 'vllm':
      registerOpenAIRoutes(app, ctx, 'vllm');
      break;
    case 'sd-server':
      registerSdRoutes(app, ctx);
      break;
    case 'whisper-server':
      registerWhisperRoutes(app, ctx);
      break;
    case 'koboldcpp':
      registerKoboldRoutes(app, ctx);
      registerOpenAIRoutes(app, ctx, 'koboldcpp');
      registerOpenAITranscriptionRoute(app, ctx);
      break;
  }
}

import type { EngineLease, Supervisor } from '../backends';
import type { Endpoint, EngineRoute } from '../engines';
import type { LocalModelRecord, ModelRegistry } from '../registry';
import type { RequestOutcome, RequestRow } from '../store';
import { canServe } from './capabilities';
import { callEngine, type EngineBody, type TranscriptionUpload } from './engine-call';
import { asRouterError, badRequest, modelNotFound, RouterError } from './errors';
import { rewriteResponseModel, sseEvents, withModel } from './id-rewrite';
import { imageWork, parseSize, usageTokens, wavSeconds, type WorkMeasure } from './work-measure';

export interface ServeInput {
  endpoint: Endpoint;
  /** The model name the client used. */
  model: string;
  json?: Record<string, unknown>;
  upload?: TranscriptionUpload;
  stream: boolean;
  /** Aborts when the client goes away; cancels the request at the engine. */
  signal: AbortSignal;
  promptBytes?: number;
}

export type ServeOutput =
  | { kind: 'json'; status: number; body: unknown; model: LocalModelRecord }
  | { kind: 'text'; status: number; body: string; contentType: string; model: LocalModelRecord }
  | { kind: 'sse'; status: number; events: AsyncGenerator<unknown>; model: LocalModelRecord; /** Ends the request if the events are never read to the end. */ close(): void };

export interface ExecutorDeps {
  nodeId: string;
  registry: ModelRegistry;
  supervisor: Supervisor;
  requestTimeoutMs: number;
  onFinished(row: RequestRow): void;
  now?(): number;
}

/** Runs one client request on a local engine: pick the replica, get the engine, call it, rewrite IDs, record the work. */
export class RequestExecutor {
  private readonly now: () => number;

  constructor(private readonly deps: ExecutorDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Picks the local config that will serve `model` for `endpoint` (rotation among replicas, ID-4). */
  pick(model: string, endpoint: Endpoint): LocalModelRecord {
    const records = this.deps.registry.resolve(model);
    if (!records.length) throw modelNotFound(model);
    const capable = records.filter((r) => canServe(r.config.capabilities, endpoint));
    if (!capable.length) throw badRequest(`The model '${model}' cannot serve ${endpoint} requests (capabilities: ${records[0].config.capabilities.join(', ')})`, 'model');
    return this.deps.registry.rotate(records[0].publicId, capable)!;
  }

  async run(input: ServeInput): Promise<ServeOutput> {
    const record = this.pick(input.model, input.endpoint);
    const started = this.now();
    const route = this.deps.supervisor.adapter(record.localId).routes[input.endpoint];
    if (!route) throw badRequest(`The model '${input.model}' (${record.config.backend}) has no ${input.endpoint} endpoint`, 'model');
    const work: WorkMeasure = this.measure(input);
    const signal = AbortSignal.any([input.signal, AbortSignal.timeout(this.deps.requestTimeoutMs)]);
    let lease: EngineLease | undefined;
    let finished = false;
    const finish = (outcome: RequestOutcome, status: number | null, error: string | null, extra: WorkMeasure = {}) => {
      if (finished) return;
      finished = true;
      lease?.release();
      this.deps.onFinished({
        finishedAt: this.now(), nodeId: this.deps.nodeId, model: record.publicId, localId: record.localId, backend: record.config.backend,
        endpoint: input.endpoint, streamed: input.stream, ...work, ...extra, queueWaitMs: lease?.waitedMs ?? this.now() - started,
        durationMs: this.now() - started, outcome, status, error,
      });
    };
    try {
      lease = await this.deps.supervisor.acquire(record.localId, signal);
      const res = await this.call(lease, route, input, record).catch(async (err: unknown) => {
        throw await this.callError(err, lease!, record, input.signal);
      });
      if (!res.ok) {
        const body = await errorBody(res, record);
        finish('error', res.status, body.error.message);
        return { kind: 'json', status: res.status, body, model: record };
      }
      if (input.stream && route.kind === 'openai-json') {
        const close = () => {
          void res.body?.cancel().catch(() => {});
          finish('cancelled', 499, 'client closed the request');
        };
        return { kind: 'sse', status: 200, events: this.relayEvents(res, lease, record, finish), model: record, close };
      }
      return await this.readBody(res, route, input, record, finish);
    } catch (err) {
      const e = input.signal.aborted ? new RouterError(499, 'client_closed', 'client closed the request') : asRouterError(err);
      finish(input.signal.aborted ? 'cancelled' : 'error', e.status, e.message);
      throw e;
    }
  }

  private measure(input: ServeInput): WorkMeasure {
    if (input.endpoint === 'image' && input.json) return imageWork(input.json);
    if (input.endpoint === 'transcription' && input.upload) return { audioSeconds: wavSeconds(input.upload.file) };
    return { promptBytes: input.promptBytes };
  }

  private call(lease: EngineLease, route: EngineRoute, input: ServeInput, record: LocalModelRecord): Promise<Response> {
    let body: EngineBody;
    if (route.kind === 'multipart-transcription') {
      const upload = input.upload!;
      const wanted = upload.fields.response_format ?? 'json';
      const format = wanted === 'json' || wanted === 'verbose_json' ? route.responseFormat : wanted;
      body = { upload: { ...upload, fields: { ...upload.fields, model: record.localId, response_format: format } } };
    } else if (route.kind === 'kobold-txt2img') {
      return this.koboldImages(lease, route, input);
    } else {
      body = { json: withModel(input.json!, record.localId) };
    }
    return callEngine(lease, route, body, AbortSignal.any([input.signal, AbortSignal.timeout(this.deps.requestTimeoutMs)]));
  }

  /** KoboldCpp's txt2img makes one image per call: `n` images are `n` calls, answered as one `{images}` body. */
  private async koboldImages(lease: EngineLease, route: EngineRoute, input: ServeInput): Promise<Response> {
    const j = input.json!;
    const [width, height] = parseSize(j.size ?? '512x512') ?? [512, 512];
    const n = typeof j.n === 'number' ? j.n : 1;
    const images: string[] = [];
    for (let i = 0; i < n; i++) {
      const seed = typeof j.seed === 'number' ? j.seed + i : undefined;
      const res = await callEngine(lease, route, { json: { prompt: j.prompt, negative_prompt: j.negative_prompt, width, height, steps: j.steps ?? 20, seed } }, AbortSignal.any([input.signal, AbortSignal.timeout(this.deps.requestTimeoutMs)]));
      if (!res.ok) return res;
      images.push(...(((await res.json()) as { images?: string[] }).images ?? []));
    }
    return new Response(JSON.stringify({ images }), { status: 200, headers: { 'content-type': 'application/json' } });
  }

  /** A failed call: the client left, the engine crashed (say why), or it could not be reached. */
  private async callError(err: unknown, lease: EngineLease, record: LocalModelRecord, clientSignal: AbortSignal): Promise<Error> {
    if (clientSignal.aborted) return new RouterError(499, 'client_closed', 'client closed the request');
    if ((err as Error).name === 'TimeoutError') return new RouterError(504, 'engine_timeout', `engine for model '${record.publicId}' did not answer within ${Math.round(this.deps.requestTimeoutMs / 1000)} s`);
    await waitForExit(lease, 300);
    const proc = lease.process;
    if (proc.state === 'failed' || proc.state === 'stopped') {
      return new RouterError(502, 'engine_crashed', `engine for model '${record.publicId}' exited during the request: ${proc.lastError ?? 'no reason given'}`);
    }
    return new RouterError(502, 'engine_unreachable', `engine for model '${record.publicId}' could not be reached: ${(err as Error).message}`);
  }

  private async readBody(res: Response, route: EngineRoute, input: ServeInput, record: LocalModelRecord, finish: Finish): Promise<ServeOutput> {
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      const e = input.signal.aborted ? new RouterError(499, 'client_closed', 'client closed the request') : new RouterError(502, 'engine_crashed', `engine for model '${record.publicId}' broke off its answer: ${(err as Error).message}`);
      throw e;
    }
    const contentType = res.headers.get('content-type') ?? '';
    if (!contentType.includes('json')) {
      finish('ok', res.status, null);
      return { kind: 'text', status: res.status, body: text, contentType: contentType || 'text/plain', model: record };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new RouterError(502, 'engine_bad_response', `engine for model '${record.publicId}' answered with invalid JSON`);
    }
    if (route.kind === 'kobold-txt2img') {
      const images = (body as { images?: string[] }).images ?? [];
      body = { created: Math.floor(Date.now() / 1000), data: images.map((b64) => ({ b64_json: b64 })) };
    }
    if (route.kind === 'multipart-transcription') {
      const verbose = body as { text?: string; duration?: number };
      const wanted = input.upload?.fields.response_format ?? 'json';
      finish('ok', res.status, null, { audioSeconds: wavSeconds(input.upload!.file) ?? verbose.duration });
      return { kind: 'json', status: res.status, body: wanted === 'verbose_json' ? body : { text: verbose.text ?? '' }, model: record };
    }
    finish('ok', res.status, null, input.endpoint === 'chat' || input.endpoint === 'completion' ? { tokensGenerated: usageTokens(body) } : {});
    return { kind: 'json', status: res.status, body: rewriteResponseModel(body, record.localId, record.publicId), model: record };
  }

  /** Relays SSE events one by one with IDs rewritten; records the request when the stream ends, fails or is cancelled. */
  private async *relayEvents(res: Response, lease: EngineLease, record: LocalModelRecord, finish: Finish): AsyncGenerator<unknown> {
    let tokens = 0;
    let usage: number | undefined;
    let outcome: RequestOutcome = 'cancelled';
    let error: string | null = 'client closed the request';
    try {
      for await (const event of sseEvents(res.body as unknown as AsyncIterable<Uint8Array>)) {
        if (event === '[DONE]') break;
        const e = event as { choices?: { delta?: { content?: string }; text?: string }[]; usage?: { completion_tokens?: number } };
        if (e.choices?.some((c) => c.delta?.content || c.text)) tokens++;
        if (typeof e.usage?.completion_tokens === 'number') usage = e.usage.completion_tokens;
        yield rewriteResponseModel(event, record.localId, record.publicId);
      }
      outcome = 'ok';
      error = null;
    } catch (err) {
      if ((err as Error).name === 'AbortError' || (err as { code?: string }).code === 'ABORT_ERR') throw new RouterError(499, 'client_closed', 'client closed the request');
      await waitForExit(lease, 300);
      outcome = 'error';
      error = `engine for model '${record.publicId}' broke off the stream: ${lease.process.lastError ?? (err as Error).message}`;
      throw new RouterError(502, 'engine_crashed', error);
    } finally {
      finish(outcome, outcome === 'ok' ? 200 : outcome === 'cancelled' ? 499 : 502, error, { tokensGenerated: usage ?? tokens });
    }
  }
}

type Finish = (outcome: RequestOutcome, status: number | null, error: string | null, extra?: WorkMeasure) => void;

async function errorBody(res: Response, record: LocalModelRecord): Promise<{ error: { message: string; type: string; code: string | number } }> {
  const text = await res.text().catch(() => '');
  let message = text.slice(0, 2000) || res.statusText;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    message = (typeof parsed.error === 'string' ? parsed.error : parsed.error?.message) ?? parsed.message ?? message;
  } catch {
    /* not JSON: keep the text */
  }
  return { error: { message: `engine for model '${record.publicId}' answered ${res.status}: ${message}`, type: res.status >= 500 ? 'server_error' : 'invalid_request_error', code: res.status >= 500 ? 'engine_error' : 'engine_rejected' } };
}

function waitForExit(lease: EngineLease, ms: number): Promise<void> {
  const proc = lease.process;
  if (proc.state === 'failed' || proc.state === 'stopped') return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    proc.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

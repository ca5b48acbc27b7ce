import { type EngineLease, HUNG_REASON, type LeaseEnd, type Supervisor } from '../backends';
import { AnswerTooLarge, fetchAnswer } from '../backends/answer-limits';
import { CallEnd, type ClientGone, goneOf } from '../backends/call-end';
import { type HttpAnswer, postJson } from '../backends/http-call';
import type { Endpoint, EngineRoute } from '../engines';
import type { Target } from '../registry';
import { endpointForClients } from '../routing/static-endpoints';
import { callEngine, type TranscriptionUpload } from './engine-call';
import { RouterError, tooLarge } from './errors';
import { rawWithModel } from './id-rewrite';
import { parseSize, type WorkMeasure, wavSeconds } from './work-measure';

/** What a request body is, before it is sent anywhere. */
export interface RequestPayload {
  endpoint: Endpoint;
  json?: Record<string, unknown>;
  /** `json` as the client sent it: passed on as those bytes, the model renamed in place. */
  rawJson?: string;
  upload?: TranscriptionUpload;
  /** The client going away. */
  client: ClientGone;
  /** Aborts the wait for the runtime only (a borrowed request taken back before it claims it, HELPER-2). */
  acquireSignal?: AbortSignal;
  /** Called once the request holds the runtime; returning false gives it back unstarted (a borrowed request withdrawn meanwhile). */
  onClaimed?: () => boolean | void;
  /** Ends an own request's wait for the runtime (HELPER-1), whatever the outcome. */
  ownDone?: () => void;
  /** Extra headers for a call to another node's worker API (a guardian's answer says who it answers for). */
  headers?: Record<string, string>;
}

/** An open call to whatever serves the target: its response (client-shaped), and how to end and explain it. */
export interface Upstream {
  response: HttpAnswer;
  waitedMs: number;
  /** Work measured from the answer (audio seconds from a verbose transcription). */
  work?: WorkMeasure;
  /**
   * Ends the call. `done`: the engine answered (its job ended now); `cancelled`: it did not. A local engine's lease
   * returns the job's derived service time (PRICE-2); other upstreams return null.
   */
  release(end?: LeaseEnd): number | null;
  /** Why the call or its body broke (crash with the engine's last words, unreachable node, timeout). */
  explain(err: unknown): Promise<RouterError>;
  /** Aborts the call at once (the client left or stalled): the engine or node sees it cancelled. */
  cancel(): void;
}

/** The worker API path on another node for each endpoint (same shapes as the public /v1 API). */
export const WORKER_PATHS: Record<Endpoint, string> = {
  chat: '/router/v1/node/worker/v1/chat/completions',
  completion: '/router/v1/node/worker/v1/completions',
  embedding: '/router/v1/node/worker/v1/embeddings',
  image: '/router/v1/node/worker/v1/images/generations',
  transcription: '/router/v1/node/worker/v1/audio/transcriptions',
};

/** Runs on a local engine: waits for the lane, calls the engine in its own shape, answers in the client's shape. */
export async function openLocal(
  supervisor: Supervisor,
  target: Target,
  p: RequestPayload,
  timeoutMs: number,
): Promise<Upstream> {
  const route = supervisor.adapter(target.localId).routes[p.endpoint];
  if (!route)
    throw new RouterError(
      400,
      'invalid_request',
      `The model '${target.clusterId}' (${target.backend}) has no ${p.endpoint} endpoint`,
      'invalid_request_error',
      'model',
    );
  // The client, the deadline (counted from here, the wait for the lane included) and a cancel end the call.
  const end = new CallEnd(p.client, timeoutMs);
  // The client's going away ends the wait; a borrowed request's take-back too (its own AbortSignal, then joined).
  const lease = await supervisor
    .acquire(target.localId, p.acquireSignal ? goneOf(AbortSignal.any([p.client.signal, p.acquireSignal])) : p.client)
    .catch((err: unknown) => {
      end.clear();
      if (p.acquireSignal?.aborted && !p.client.aborted) {
        // Taken back while waiting for the runtime: because its own work arrived (HELPER-1/2) or the master withdrew it (HOLD-4, HELPER-5).
        const reason =
          (p.acquireSignal.reason as Error | undefined)?.message === 'withdrawn' ? 'withdrawn' : 'own_work_arrived';
        throw new RouterError(
          409,
          'offload_returned',
          `borrowed request handed back to its owner (${reason})`,
          'invalid_request_error',
          null,
          { reason },
        );
      }
      // A borrowed request whose model was removed here before it started: its owner runs it (no link covers it now).
      if (p.acquireSignal && !p.client.aborted && !supervisor.has(target.localId)) {
        throw new RouterError(
          409,
          'offload_returned',
          'borrowed request handed back to its owner (no_link: the model was removed from this node)',
          'invalid_request_error',
          null,
          { reason: 'no_link' },
        );
      }
      throw err;
    });
  if (p.onClaimed?.() === false) {
    end.clear();
    lease.release('unused');
    throw new RouterError(
      409,
      'offload_returned',
      'borrowed request handed back to its owner (withdrawn)',
      'invalid_request_error',
      null,
      { reason: 'withdrawn' },
    );
  }
  const explain = async (err: unknown) => {
    if (p.client.aborted || end.reason === 'client' || end.reason === 'cancelled')
      return new RouterError(499, 'client_closed', 'client closed the request');
    if (err instanceof AnswerTooLarge) return tooLarge(err, `engine for model '${target.clusterId}'`);
    if ((err as Error).name === 'TimeoutError' || end.reason === 'timeout')
      return new RouterError(
        504,
        'engine_timeout',
        `engine for model '${target.clusterId}' did not answer within ${Math.round(timeoutMs / 1000)} s`,
      );
    const proc = lease.process;
    if (!proc.hung) await waitForExit(lease, 300);
    // Killed by its health checks while the request was in it; the lane restarts it.
    if (proc.hung)
      return new RouterError(
        502,
        'engine_hung',
        `engine for model '${target.clusterId}' ${HUNG_REASON} during the request; it was killed and is being restarted`,
      );
    if (proc.state === 'failed' || proc.state === 'stopped')
      return new RouterError(
        502,
        'engine_crashed',
        `engine for model '${target.clusterId}' exited during the request: ${proc.lastError ?? 'no reason given'}`,
      );
    return new RouterError(
      502,
      'engine_unreachable',
      `engine for model '${target.clusterId}' could not be reached: ${(err as Error).message}`,
    );
  };
  const up: Upstream = {
    response: undefined as unknown as HttpAnswer,
    waitedMs: lease.waitedMs,
    release: (how) => {
      end.clear();
      return lease.release(how);
    },
    explain,
    cancel: () => end.cancel(),
  };
  try {
    if (route.kind === 'kobold-txt2img') up.response = await koboldImages(lease, route, p.json!, end);
    else if (route.kind === 'multipart-transcription')
      Object.assign(up, await transcribe(lease, route, target, p.upload!, end));
    else up.response = await callEngine(lease, route, { text: jsonText(p, target.localId) }, end);
  } catch (err) {
    const e = await explain(err);
    up.release('cancelled');
    throw e;
  }
  return up;
}

/** The public OpenAI paths, as a static-route endpoint serves them. */
export const OPENAI_PATHS: Record<Endpoint, string> = {
  chat: '/v1/chat/completions',
  completion: '/v1/completions',
  embedding: '/v1/embeddings',
  image: '/v1/images/generations',
  transcription: '/v1/audio/transcriptions',
};

/** Forwards to the node that holds the target (ID-3): the body names that node's local ID. */
export function openRemote(target: Target, p: RequestPayload, token: string, timeoutMs: number): Promise<Upstream> {
  return forward(
    target,
    `${target.url}${WORKER_PATHS[p.endpoint]}`,
    p,
    { authorization: `Bearer ${token}` },
    timeoutMs,
    `node '${target.nodeId}'`,
    'node',
  );
}

/**
 * Sends to a static-route endpoint (routing.static_routes) in the OpenAI shape, under the public ID: to its URL without
 * user information, with its credentials as Basic authorization; messages name it without them.
 */
export function openStatic(
  target: Target,
  p: RequestPayload,
  timeoutMs: number,
  call: { url: string; authorization: string | null },
): Promise<Upstream> {
  return forward(
    target,
    `${call.url.replace(/\/+$/, '')}${OPENAI_PATHS[p.endpoint]}`,
    p,
    call.authorization ? { authorization: call.authorization } : {},
    timeoutMs,
    `upstream ${endpointForClients(target.url!)}`,
    'upstream',
  );
}

async function forward(
  target: Target,
  url: string,
  p: RequestPayload,
  headers: Record<string, string>,
  timeoutMs: number,
  who: string,
  code: 'node' | 'upstream',
): Promise<Upstream> {
  const end = new CallEnd(p.client, timeoutMs);
  const explain = async (err: unknown) => {
    if (p.client.aborted || end.reason === 'client' || end.reason === 'cancelled')
      return new RouterError(499, 'client_closed', 'client closed the request');
    if (err instanceof AnswerTooLarge) return tooLarge(err, `${who} for '${target.clusterId}'`);
    if ((err as Error).name === 'TimeoutError' || end.reason === 'timeout')
      return new RouterError(
        504,
        `${code}_timeout`,
        `${who} did not answer for '${target.clusterId}' within ${Math.round(timeoutMs / 1000)} s`,
      );
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return new RouterError(
      502,
      `${code}_unreachable`,
      `${who} could not be reached for '${target.clusterId}': ${cause?.code ?? cause?.message ?? (err as Error).message}`,
    );
  };
  try {
    const response = p.upload
      ? fetchAnswer(
          await fetch(url, {
            method: 'POST',
            headers,
            body: toForm({ ...p.upload, fields: { ...p.upload.fields, model: target.localId } }),
            signal: end.toSignal(),
          }),
        )
      : await postJson(url, jsonText(p, target.localId), end, p.headers ? { ...headers, ...p.headers } : headers);
    return {
      response,
      waitedMs: 0,
      explain,
      cancel: () => end.cancel(),
      release: () => {
        end.clear();
        return null;
      },
    };
  } catch (err) {
    const e = await explain(err);
    end.clear();
    throw e;
  }
}

/**
 * The JSON body for an upstream that knows the model as `model`: the bytes the client sent, the name renamed in
 * place, where that is exact (`rawWithModel`); else the parsed body serialised again (a proxy passes a
 * body on, it does not rebuild it — a long chat history costs its size again in JSON.stringify).
 */
function jsonText(p: RequestPayload, model: string): string {
  return (
    (p.rawJson !== undefined ? rawWithModel(p.rawJson, p.json!, model) : undefined) ??
    JSON.stringify({ ...p.json!, model })
  );
}

function toForm(upload: TranscriptionUpload): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(upload.fields)) form.append(k, v);
  form.append(
    'file',
    new Blob([upload.file], { type: upload.mimetype || 'application/octet-stream' }),
    upload.filename || 'audio.wav',
  );
  return form;
}

/** KoboldCpp's txt2img makes one image per call: `n` images are `n` calls, answered as one OpenAI images body. */
async function koboldImages(
  lease: EngineLease,
  route: EngineRoute,
  j: Record<string, unknown>,
  end: CallEnd,
): Promise<HttpAnswer> {
  const [width, height] = parseSize(j.size ?? '512x512') ?? [512, 512];
  const n = typeof j.n === 'number' ? j.n : 1;
  const data: { b64_json: string }[] = [];
  for (let i = 0; i < n; i++) {
    const seed = typeof j.seed === 'number' ? j.seed + i : undefined;
    const res = await callEngine(
      lease,
      route,
      { json: { prompt: j.prompt, negative_prompt: j.negative_prompt, width, height, steps: j.steps ?? 20, seed } },
      end,
    );
    if (!res.ok) return res;
    for (const b64 of ((await res.json()) as { images?: string[] }).images ?? []) data.push({ b64_json: b64 });
  }
  return json({ created: Math.floor(Date.now() / 1000), data });
}

/** Asks the engine for verbose JSON (to learn the audio length), then answers in the format the client asked for. */
async function transcribe(
  lease: EngineLease,
  route: EngineRoute & { kind: 'multipart-transcription' },
  target: Target,
  upload: TranscriptionUpload,
  end: CallEnd,
) {
  const wanted = upload.fields.response_format ?? 'json';
  const structured = wanted === 'json' || wanted === 'verbose_json';
  const fields = {
    ...upload.fields,
    model: target.localId,
    response_format: structured ? route.responseFormat : wanted,
  };
  const res = await callEngine(lease, route, { upload: { ...upload, fields } }, end);
  const fromHeader = wavSeconds(upload.file);
  if (!res.ok || !structured || !(res.headers.get('content-type') ?? '').includes('json'))
    return { response: res, work: { audioSeconds: fromHeader } };
  const verbose = (await res.json()) as { text?: string; duration?: number };
  return {
    response: json(wanted === 'verbose_json' ? verbose : { text: verbose.text ?? '' }),
    work: { audioSeconds: fromHeader ?? verbose.duration },
  };
}

const json = (body: unknown, status = 200) =>
  fetchAnswer(new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } }));

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

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SimEngineContext } from './context';
import { INJECTED_FAILURE_MESSAGE, imageRefusalBody, SimCrashedError, sendError } from './errors';
import { sleep, untilAborted } from './generation';
import type { SeenState } from './seen';
import type { Slot } from './state';

/** Per-request test hooks read from the body (JSON field or multipart form field). */
export interface RequestHooks {
  /** `sim_fail`: crash the process mid-request, answer 500, or never answer until the client leaves. */
  fail?: 'crash' | 'http_500' | 'hang';
  /** `sim_token_time`: token time in ms for this request (divided by time_scale like every duration). */
  tokenTime?: number;
}

const HOOK_FAILS = ['crash', 'http_500', 'hang'] as const;

export function readHooks(body: unknown): RequestHooks {
  const hooks: RequestHooks = {};
  if (!body || typeof body !== 'object') return hooks;
  const { sim_fail: fail, sim_token_time: tokenTime } = body as Record<string, unknown>;
  if (typeof fail === 'string' && (HOOK_FAILS as readonly string[]).includes(fail))
    hooks.fail = fail as RequestHooks['fail'];
  const ms = typeof tokenTime === 'string' && tokenTime.trim() !== '' ? Number(tokenTime) : tokenTime;
  if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0) hooks.tokenTime = ms;
  return hooks;
}

/** One admitted request holding a slot. */
export interface Job {
  readonly signal: AbortSignal;
  readonly slot: Slot;
  /** True when this request must crash the engine (`fail: crash_on_request` or `sim_fail: "crash"`). */
  readonly crashing: boolean;
  /** Wall-clock ms per generated token for this request. */
  readonly tokenMs: number;
  /** Kills the engine now (exit code 3). Never resolves normally. */
  crash(): Promise<never>;
}

export interface JobSpec {
  hooks: RequestHooks;
  /** Tokens the request puts in the KV cache before generating (its prompt). */
  promptTokens?: number;
  /** The request carries image input: refused unless the model has vision and no `fail: image_not_supported`. */
  imageInput?: boolean;
  /** The prompt text, recorded in the engine's seen ring (`GET /sim/seen`). */
  prompt?: string;
  /** Does the work and sends the reply (or streams it on the hijacked reply). */
  run(job: Job): Promise<void>;
}

/**
 * The life of one generation request: count it, inject failures, wait FIFO for a slot, run,
 * and classify the end as completed, cancelled (client left first) or failed.
 */
export async function runJob(
  ctx: SimEngineContext,
  request: FastifyRequest,
  reply: FastifyReply,
  spec: JobSpec,
): Promise<FastifyReply> {
  const { state, options } = ctx;
  state.counters.requests += 1;
  const seen = spec.prompt === undefined ? undefined : ctx.seen.add(spec.prompt);
  const ended = (how: SeenState) => {
    if (!seen) return;
    seen.state = how;
    seen.endedAt = Date.now();
  };
  if (spec.imageInput && (!options.vision || options.fail === 'image_not_supported')) {
    state.counters.failed += 1;
    ended('failed');
    return reply.code(options.image_refusal).send(imageRefusalBody(options.image_refusal));
  }
  if (options.fail === 'http_500' || spec.hooks.fail === 'http_500') {
    state.counters.failed += 1;
    ended('failed');
    return sendError(reply, 500, INJECTED_FAILURE_MESSAGE);
  }

  const controller = new AbortController();
  const res = reply.raw;
  const onClose = () => {
    if (!res.writableFinished) controller.abort(new Error('client disconnected'));
  };
  res.on('close', onClose);
  const { signal } = controller;

  let slot: Slot;
  try {
    slot = await state.acquire(signal);
  } catch {
    state.counters.cancelled += 1;
    ended('cancelled');
    return abandon(reply);
  }
  // Granted in the same turn as its client left (a freed slot goes to the next waiter before its abort is seen).
  if (signal.aborted) {
    slot.release();
    res.off('close', onClose);
    state.counters.cancelled += 1;
    ended('cancelled');
    return abandon(reply);
  }
  if (seen) {
    seen.state = 'running';
    seen.started = true;
    seen.startedAt = Date.now();
  }

  slot.tokens = spec.promptTokens ?? 0;
  let crashed = false;
  const job: Job = {
    signal,
    slot,
    crashing: options.fail === 'crash_on_request' || spec.hooks.fail === 'crash',
    tokenMs: ctx.scaled(spec.hooks.tokenTime ?? options.token_time),
    crash: async () => {
      crashed = true;
      ctx.crash(3);
      throw new SimCrashedError('sim: crashed on request');
    },
  };

  try {
    if (spec.hooks.fail === 'hang') await untilAborted(signal);
    await spec.run(job);
    state.counters.completed += 1;
    ended('completed');
    return reply;
  } catch (err) {
    if (crashed) {
      state.counters.failed += 1;
      ended('failed');
      return abandon(reply);
    }
    // The client left: a write to its closed socket can fail before the response's 'close' event is seen.
    if (signal.aborted || res.destroyed || res.socket?.destroyed !== false) {
      if (!signal.aborted) controller.abort(new Error('client disconnected'));
      state.counters.cancelled += 1;
      ended('cancelled');
      return abandon(reply);
    }
    state.counters.failed += 1;
    ended('failed');
    if (!reply.sent && !res.headersSent) return sendError(reply, 500, `sim: ${(err as Error).message}`);
    res.destroy();
    return abandon(reply);
  } finally {
    slot.release();
    res.off('close', onClose);
  }
}

/** Spends `wallMs` on the request; a crashing request kills the engine halfway through. */
export async function work(job: Job, wallMs: number): Promise<void> {
  if (job.crashing) {
    await sleep(wallMs / 2, job.signal);
    await job.crash();
  }
  await sleep(wallMs, job.signal);
}

/** Nothing more will be written: the client is gone or the engine crashed. */
function abandon(reply: FastifyReply): FastifyReply {
  if (!reply.sent) reply.hijack();
  return reply;
}

/** Starts an SSE response on the hijacked reply. */
export function startEventStream(reply: FastifyReply): void {
  if (!reply.sent) reply.hijack();
  if (reply.raw.headersSent) return;
  reply.raw.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'Access-Control-Allow-Origin': '*',
  });
}

/**
 * Writes one `data: …\n\n` event; resolves when the socket has taken it, rejects when the client left — also while
 * the write waits on a full socket (a destroyed connection may never call the write back).
 */
export function writeEvent(reply: FastifyReply, data: unknown, signal: AbortSignal): Promise<void> {
  const text = `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    reply.raw.write(text, (err) => {
      signal.removeEventListener('abort', onAbort);
      if (err) reject(signal.aborted ? signal.reason : err);
      else resolve();
    });
  });
}

import { randomUUID } from 'node:crypto';
import type { Supervisor } from '../backends';
import { AnswerTooLarge, ERROR_BODY_LIMIT } from '../backends/answer-limits';
import type { ClientGone } from '../backends/call-end';
import type { HttpAnswer } from '../backends/http-call';
import { type AnswerFacts, factsFromHeaders, QUEUE_COMMENTS_HEADER } from '../contract/answer-facts';
import type { Endpoint } from '../engines';
import type { GuardianDirectory } from '../guardian/rules';
import { guardianRoutedRow } from '../lending/decision-rows';
import type { LendingGate, OwnTicket } from '../lending/gate';
import type { ModelRef } from '../lending/types';
import type { Target } from '../registry';
import { endpointForClients } from '../routing/static-endpoints';
import type { DecisionInput, GuardianReason, RequestRow } from '../store';
import { unparsedAnswer } from './answer-scan';
import type { TranscriptionUpload } from './engine-call';
import { asRouterError, RouterError, tooLarge } from './errors';
import { type EventBatch, RawEvent, relayed } from './event-batch';
import { refuseUnhonoured } from './feature-gate';
import { readQueueComments } from './forwarded-queue';
import {
  carriesImage,
  GUARDIAN_FOR_HEADER,
  guardianUnavailable,
  needsGuardian,
  noGuardian,
  refusedImage,
} from './guardian-route';
import { JsonAnswer, parseAnswer } from './json-answer';
import type { QueueLimit } from './queue-limit';
import { type Finish, relayEvents, rewrite } from './relay-events';
import type { TargetResolver } from './target-resolver';
import { openLocal, openRemote, openStatic, type RequestPayload, type Upstream } from './upstream';
import {
  engineReportedMs,
  imageWork,
  usagePromptTokens,
  usageTokens,
  type WorkMeasure,
  wavSeconds,
} from './work-measure';

export interface ServeInput {
  endpoint: Endpoint;
  /** The model name the client used (a local ID on worker requests). */
  model: string;
  json?: Record<string, unknown>;
  /** `json` as the client sent it (passed on as those bytes). */
  rawJson?: string;
  /**
   * The caller reads the answer's parsed body (the Ollama and Responses translators): a JSON answer is parsed at once,
   * a body that is not JSON a 502 that its analytics row records. Otherwise its bytes go on unparsed (`answer-scan`).
   */
  readsBody?: boolean;
  upload?: TranscriptionUpload;
  stream: boolean;
  /** The client going away; cancels the request at the engine. */
  client: ClientGone;
  promptBytes?: number;
  /** A worker request from the master: run here, the model named by its local ID. */
  worker?: boolean;
  /** A lent request: the owner it was borrowed from (this node is the helper). */
  borrowedFrom?: ModelRef;
  /** Request id (lent requests keep the owner's). */
  requestId?: string;
  /** GUARD-2: a guardian answers this request for that text-only model (it is never sent to a guardian again). */
  guardian?: { for: ModelRef; reason: GuardianReason };
  /**
   * Called once if the request waits in a router queue: `position()` is its 1-based place, null once it no longer
   * waits; `node`: the node whose queue holds it (a forwarded stream: the slave's), this node when absent. A stream
   * that passes it to a remote target asks that node for its queue comments.
   */
  onQueued?(position: () => number | null, node?: string): void;
}

export type ServeOutput = (
  | {
      kind: 'json';
      status: number;
      body: unknown;
      modelId: string /** The body as the engine sent it, its model ID rewritten in place: sent as is. */;
      text?: string;
    }
  | { kind: 'text'; status: number; body: string; contentType: string; modelId: string }
  | {
      kind: 'sse';
      status: number;
      events: AsyncGenerator<EventBatch>;
      modelId: string /** Ends the request if the events are never read to the end. */;
      close(): void;
    }
) & {
  /** GUARD-2: the guardian that answered (`node/localId`), for the `x-routerdesk-served-by` header. */
  servedBy?: string;
  /** Where it ran, how long it waited, the helper a lent one went to (the `x-routerdesk-*` headers). */
  facts?: AnswerFacts;
};

export interface ExecutorDeps {
  nodeId: string;
  resolver: TargetResolver;
  supervisor: Supervisor;
  /** The cluster token, for forwarding to other nodes. */
  clusterToken: string;
  requestTimeoutMs: number;
  onFinished(row: RequestRow): void;
  /** Called when a request starts, with its ID; the returned function when it ends (in-flight counts, idle tracking). */
  onStart?(target: Target, borrowed: boolean, input: ServeInput, requestId: string): () => void;
  /** The router queue and lending of enrolled models (QUEUE-*, LEASE-*, HELPER-*). */
  lending?: LendingGate;
  /** How a static-route endpoint (as shown, password hidden) is called: its URL and Basic authorization. */
  staticCall?(shown: string): { url: string; authorization: string | null };
  /** A real turn at a static-route endpoint: did it answer (ROUTE-9)? */
  onTurn?(target: Target, answered: boolean): void;
  /** Bounded waiting for local engines (server.max_queue, a model's max_queue). */
  queueLimit?: QueueLimit;
  /** Guardian settings in force on this node (GUARD-1): who answers image requests for a text-only model. */
  guardians?: GuardianDirectory;
  /** Where decisions are logged (a guardian route, GUARD-2). */
  decisions?: { add(row: DecisionInput): void };
  now?(): number;
}

/** Errors of calls that failed before any byte of an answer arrived (the only ones another replica may retry). */
const unanswered = new WeakSet<RouterError>();

/** Runs one client request: resolve the target, open the engine or node, relay the answer with IDs rewritten, record the work. */
export class RequestExecutor {
  private readonly now: () => number;

  constructor(readonly deps: ExecutorDeps) {
    this.now = deps.now ?? Date.now;
  }

  async run(input: ServeInput): Promise<ServeOutput> {
    if (!input.borrowedFrom || !input.requestId) return this.resolveAndRun(input);
    // A borrowed request's answer is also kept on this helper: its owner can fetch it if the relay broke.
    const id = input.requestId;
    try {
      const out = await this.resolveAndRun(input);
      this.deps.lending?.borrowedAnswered?.(id, out.kind === 'json' ? { status: out.status, body: out.body } : null);
      return out;
    } catch (err) {
      // A second copy of a request refused as such is not that request's end: the first copy's answer stays.
      if (!(err instanceof RouterError && err.code === 'duplicate_request'))
        this.deps.lending?.borrowedAnswered?.(id, null);
      throw err;
    }
  }

  private async resolveAndRun(input: ServeInput): Promise<ServeOutput> {
    const tried = new Set<string>();
    for (;;) {
      const target = await this.deps.resolver.resolve({
        endpoint: input.endpoint,
        model: input.model,
        body: input.json,
        byLocalId: input.worker,
        excludeNodes: tried,
      });
      // GUARD-2: read from the structure of the body, never its text; a borrowed request was lent for its vision already.
      const image = !input.borrowedFrom && !input.guardian && carriesImage(input.endpoint, input.json);
      if (image && needsGuardian(target)) return this.byGuardian(target, input, 'detected');
      refuseUnhonoured(target, input.endpoint, input.json);
      try {
        const out = await this.runOn(target, input);
        if (image && out.kind === 'json' && refusedImage(out))
          return this.byGuardian(target, input, 'engine_refused', out);
        return out;
      } catch (err) {
        // A node that could not be reached at all has seen nothing of the request: try another replica once more.
        // Once any byte of its answer arrived it may have run it: never again elsewhere.
        if (
          err instanceof RouterError &&
          err.code === 'node_unreachable' &&
          unanswered.has(err) &&
          tried.size < 2 &&
          target.kind === 'remote'
        ) {
          tried.add(target.nodeId);
          continue;
        }
        throw err;
      }
    }
  }

  /**
   * GUARD-2: the request goes to the guardian in force for the text-only model it was addressed to, never retried on
   * that model. The answer keeps the model ID the client asked for; the guardian is named in `servedBy`.
   */
  private async byGuardian(
    target: Target,
    input: ServeInput,
    reason: GuardianReason,
    refused?: Extract<ServeOutput, { kind: 'json' }>,
  ): Promise<ServeOutput> {
    const model = { nodeId: target.nodeId, model: target.localId };
    const resolved = this.deps.guardians?.guardianFor(model) ?? null;
    if (!resolved) throw noGuardian(target, reason, refused ? errorMessage(refused.body) : undefined);
    const at = this.deps.resolver.guardianTarget(resolved.guardian, target.clusterId, resolved.url, resolved.publicId);
    if (!at) throw guardianUnavailable(target, resolved.guardian);
    refuseUnhonoured(at, input.endpoint, input.json);
    const requestId = input.requestId ?? randomUUID();
    this.deps.decisions?.add(
      guardianRoutedRow({
        at: this.now(),
        model,
        guardian: resolved.guardian,
        requestId,
        reason,
        from: resolved.from,
        engineStatus: refused?.status,
      }),
    );
    const out = await this.runOn(at, { ...input, requestId, guardian: { for: model, reason } });
    // Set, not spread: a JSON answer's body is a getter of its class (`JsonAnswer`), which a spread would drop.
    out.servedBy = `${resolved.guardian.nodeId}/${resolved.guardian.model}`;
    return out;
  }

  /**
   * The router queue of an enrolled model (QUEUE-1): own requests wait for the engine or are lent meanwhile;
   * borrowed ones wait behind own work and can be handed back (409) until they claim the runtime.
   */
  private async admit(
    target: Target,
    input: ServeInput,
    payload: RequestPayload,
  ): Promise<{ kind: 'engine'; waitedMs: number; done(): void } | Extract<OwnTicket, { kind: 'lent' }> | undefined> {
    const lending = this.deps.lending;
    if (!lending) return undefined;
    const req = {
      id: input.requestId ?? randomUUID(),
      endpoint: input.endpoint,
      stream: input.stream,
      bodyBytes: input.promptBytes ?? 0,
      json: input.json,
      onWaiting: input.onQueued,
    };
    if (input.borrowedFrom) {
      if (!lending.enrolled(target.localId))
        throw new RouterError(
          409,
          'offload_returned',
          `borrowed request handed back: '${target.localId}' is not linked on this node`,
          'invalid_request_error',
          null,
          { reason: 'no_link' },
        );
      const ticket = await lending.admitBorrowed(target.localId, input.borrowedFrom, req, input.client);
      payload.acquireSignal = ticket.takeBack;
      payload.onClaimed = ticket.claimed;
      return { kind: 'engine', waitedMs: ticket.waitedMs, done: ticket.done };
    }
    // GUARD-3: a guardian answering here for a model of this node is part of a run that restores what it displaced.
    const arrival = lending.ownArrived(target.localId, req.id, { guardian: this.restoresAfter(target, input) });
    payload.onClaimed = arrival.claimed;
    payload.ownDone = arrival.done;
    if (!lending.enrolled(target.localId)) return undefined;
    const ticket = await lending.admitOwn(target.localId, req, input.client);
    return ticket;
  }

  /** GUARD-3: a guardian on the same node as the text-only model it answers for shares that node's runtime. */
  private restoresAfter(target: Target, input: ServeInput): boolean {
    return target.kind === 'local' && input.guardian?.for.nodeId === this.deps.nodeId;
  }

  private async runOn(target: Target, input: ServeInput): Promise<ServeOutput> {
    const started = this.now();
    // One id per request: the router queue and the decision rows name it, and so does its analytics row (the timeline).
    const requestId = input.requestId ?? randomUUID();
    // What a guardian displaces here is loaded back after the restore delay once the node is quiet (GUARD-3).
    const guardianEnded = this.restoresAfter(target, input)
      ? this.deps.lending?.guardianRun?.(target.localId)
      : undefined;
    let work: WorkMeasure = {};
    try {
      work = measure(input);
    } catch {
      /* an unreadable upload is measured as nothing; the engine judges it */
    }
    const ended = this.deps.onStart?.(target, input.borrowedFrom !== undefined, input, requestId);
    let upstream: Upstream | undefined;
    let finished = false;
    let onDone: (() => void) | undefined;
    // Who served it: a lent request is recorded as the helper's work, so the owner's own fit stays its own (PRICE-2).
    let servedBy = { nodeId: target.nodeId, localId: target.localId };
    const finish: Finish = (outcome, status, error, extra = {}) => {
      if (finished) return;
      finished = true;
      waitDone?.();
      // The engine's job ended with its answer, failed or not; a cancelled one may still be running there.
      const derived = upstream?.release(outcome === 'cancelled' ? 'cancelled' : 'done') ?? null;
      payload?.ownDone?.();
      onDone?.();
      target.release?.();
      ended?.();
      guardianEnded?.();
      // What was measured, the later source winning where it says (the row is one shape: no spreads).
      const up = upstream?.work;
      const w = <K extends keyof WorkMeasure>(k: K): WorkMeasure[K] =>
        k in extra ? extra[k] : up !== undefined && k in up ? up[k] : work[k];
      const service = serviceTime(target, upstream, w('engineMs'), derived);
      const now = this.now();
      const row: RequestRow = {
        finishedAt: now,
        nodeId: servedBy.nodeId,
        model: target.clusterId,
        localId: servedBy.localId,
        backend: target.backend,
        endpoint: input.endpoint,
        streamed: input.stream,
        promptBytes: w('promptBytes'),
        promptTokens: w('promptTokens'),
        tokensGenerated: w('tokensGenerated'),
        imagePixels: w('imagePixels'),
        imageSteps: w('imageSteps'),
        imageCount: w('imageCount'),
        audioSeconds: w('audioSeconds'),
        queueWaitMs: (upstream?.waitedMs ?? now - started) + queueWaitMs,
        durationMs: now - started,
        serviceMs: service.serviceMs,
        serviceSource: service.serviceSource,
        derivedServiceMs: service.derivedServiceMs,
        outcome,
        status,
        error,
        guardianFor: input.guardian ? `${input.guardian.for.nodeId}/${input.guardian.for.model}` : null,
        guardianReason: input.guardian?.reason ?? null,
        requestId,
        lentFrom: input.borrowedFrom ? `${input.borrowedFrom.nodeId}/${input.borrowedFrom.model}` : null,
      };
      // An answer that is not a stream is recorded once its client connection is done with it: a client that stopped
      // reading it and was cut off for that (server.write_timeout) is recorded as such.
      if (input.stream || !input.client.onDelivered) return this.deps.onFinished(row);
      input.client.onDelivered((undelivered) => {
        if (undelivered !== null) {
          row.outcome = 'cancelled';
          row.status = 499;
          row.error = undelivered;
        }
        this.deps.onFinished(row);
      });
    };
    let queueWaitMs = 0;
    let payload: RequestPayload | undefined;
    let waitDone: (() => void) | undefined;
    try {
      payload = {
        endpoint: input.endpoint,
        json: input.json,
        rawJson: input.rawJson,
        upload: input.upload,
        client: input.client,
      };
      if (input.guardian && target.kind === 'remote')
        payload.headers = {
          [GUARDIAN_FOR_HEADER]: `${input.guardian.reason} ${input.guardian.for.nodeId}/${input.guardian.for.model}`,
        };
      if (input.stream && input.onQueued && target.kind === 'remote')
        payload.headers = { ...payload.headers, [QUEUE_COMMENTS_HEADER]: '1' };
      if (target.kind === 'local') {
        // Counted until it ends: beyond what the engine generates at once it waits, and waiting is bounded (429).
        waitDone = this.deps.queueLimit?.enter(target.localId, target.clusterId);
        const gate = await this.admit(target, { ...input, requestId }, payload);
        if (gate?.kind === 'lent') {
          const lentTarget = { ...target, names: [...target.names, gate.helper.model] };
          servedBy = { nodeId: gate.helper.nodeId, localId: gate.helper.model };
          finish('ok', gate.status, null, { ...usageWork(input, gate.body) });
          // Its wait here before it was lent, and at the helper before its engine took it (when the helper said).
          const facts = {
            node: gate.helper.nodeId,
            queueMs: gate.waitedMs + (gate.helperQueueMs ?? 0),
            lentTo: `${gate.helper.nodeId}/${gate.helper.model}`,
          };
          return {
            kind: 'json',
            status: gate.status,
            body: rewrite(gate.body, lentTarget),
            modelId: target.clusterId,
            facts,
          };
        }
        if (gate) {
          queueWaitMs = gate.waitedMs;
          onDone = gate.done;
        }
      }
      try {
        upstream =
          target.kind === 'local'
            ? await openLocal(this.deps.supervisor, target, payload, this.deps.requestTimeoutMs)
            : target.kind === 'remote'
              ? await openRemote(target, payload, this.deps.clusterToken, this.deps.requestTimeoutMs)
              : await openStatic(
                  target,
                  payload,
                  this.deps.requestTimeoutMs,
                  this.deps.staticCall?.(target.url!) ?? { url: target.url!, authorization: null },
                );
      } catch (err) {
        if (target.kind === 'static' && !input.client.aborted) this.deps.onTurn?.(target, false);
        if (err instanceof RouterError) unanswered.add(err);
        throw err;
      }
      if (target.kind === 'static') this.deps.onTurn?.(target, upstream.response.status < 500);
      const res = upstream.response;
      const facts: AnswerFacts =
        target.kind === 'remote'
          ? factsFromHeaders(res.headers, target.nodeId)
          : { node: this.deps.nodeId, queueMs: queueWaitMs + upstream.waitedMs, lentTo: null };
      if (!res.ok) {
        const body = await errorBody(res, target);
        finish('error', res.status, body.error.message);
        return { kind: 'json', status: res.status, body, modelId: target.clusterId, facts };
      }
      if (input.stream && (res.headers.get('content-type') ?? '').includes('text/event-stream')) {
        // The client's end of the stream: one still running is cancelled at the engine (after the relay ended the call
        // is over — `CallEnd.clear` — and the engine's answer ends on its own, `drainRest`).
        const close = () => {
          upstream?.cancel();
          finish('cancelled', 499, 'client closed the request');
        };
        // A forwarded stream waiting in the slave's queue: its comments are relayed until it runs.
        const onQueued = input.onQueued;
        const body =
          facts.queueMsAtEnd && onQueued
            ? await readQueueComments(res.body!, (position) => onQueued(position, facts.node)).catch(
                async (err: unknown) => {
                  throw await upstream!.explain(err);
                },
              )
            : res.body!;
        return {
          kind: 'sse',
          status: 200,
          events: relayEvents(res, body, upstream, target, finish, facts),
          modelId: target.clusterId,
          close,
          facts,
        };
      }
      const out = await readBody(res, upstream, input, target, finish);
      out.facts = facts;
      return out;
    } catch (err) {
      const e = input.client.aborted
        ? new RouterError(499, 'client_closed', 'client closed the request')
        : asRouterError(err);
      finish(
        input.client.aborted ? 'cancelled' : e.code === 'offload_returned' ? 'returned' : 'error',
        e.status,
        e.message,
      );
      throw e;
    }
  }
}

/**
 * PRICE-2: what the row records as the job's service time. Only a local engine's job has one: the engine's own
 * report where it gives one (the derived value is kept beside it as a cross-check), else the value derived from the
 * runtime's order; `unknown` when neither. Lent and forwarded requests are measured where they ran.
 */
function serviceTime(
  target: Target,
  upstream: Upstream | undefined,
  engineMs: number | undefined,
  derived: number | null,
): Pick<RequestRow, 'serviceMs' | 'serviceSource' | 'derivedServiceMs'> {
  if (target.kind !== 'local' || !upstream) return { serviceMs: null, serviceSource: null, derivedServiceMs: null };
  if (engineMs !== undefined) return { serviceMs: engineMs, serviceSource: 'engine', derivedServiceMs: derived };
  if (derived !== null) return { serviceMs: derived, serviceSource: 'derived', derivedServiceMs: derived };
  return { serviceMs: null, serviceSource: 'unknown', derivedServiceMs: null };
}

/** Whether a request's answer says what the analytics row records of it: the usage and timings of text generation. */
const countsUsage = (input: ServeInput) => input.endpoint === 'chat' || input.endpoint === 'completion';

/** Tokens of an answer (or of a lent request's, for the owner's analytics), and the engine's own time where it says. */
function usageWork(input: ServeInput, body: unknown): WorkMeasure {
  return countsUsage(input)
    ? { tokensGenerated: usageTokens(body), promptTokens: usagePromptTokens(body), engineMs: engineReportedMs(body) }
    : {};
}

function measure(input: ServeInput): WorkMeasure {
  if (input.endpoint === 'image' && input.json) return imageWork(input.json);
  if (input.endpoint === 'transcription' && input.upload) return { audioSeconds: wavSeconds(input.upload.file) };
  return { promptBytes: input.promptBytes };
}

async function readBody(
  res: HttpAnswer,
  upstream: Upstream,
  input: ServeInput,
  target: Target,
  finish: Finish,
): Promise<ServeOutput> {
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw await upstream.explain(err);
  }
  const contentType = res.headers.get('content-type') ?? '';
  if (!contentType.includes('json')) {
    finish('ok', res.status, null);
    return {
      kind: 'text',
      status: res.status,
      body: text,
      contentType: contentType || 'text/plain',
      modelId: target.clusterId,
    };
  }
  // Read without a parse where a scan finds what is needed: the answer's bytes go on, its body parsed only if asked.
  // A translator's answer, and a borrowed one (kept parsed for its owner), are read whole anyway: parsed at once.
  const unparsed =
    input.readsBody || input.borrowedFrom
      ? undefined
      : unparsedAnswer(text, target.names, target.clusterId, countsUsage(input));
  if (unparsed) {
    finish('ok', res.status, null, usageWork(input, unparsed.measured));
    return new JsonAnswer(res.status, unparsed.text, target);
  }
  const body = parseAnswer(text, target);
  finish('ok', res.status, null, usageWork(input, body));
  const rewritten = rewrite(body, target);
  const raw = relayed(text, body, rewritten);
  return {
    kind: 'json',
    status: res.status,
    body: rewritten,
    modelId: target.clusterId,
    ...(raw instanceof RawEvent ? { text: raw.text } : {}),
  };
}

/** The message of an error body (`{error: {message}}` or `{error: "…"}`). */
function errorMessage(body: unknown): string | undefined {
  const err = (body as { error?: { message?: unknown } | string } | null)?.error;
  const m = typeof err === 'string' ? err : err?.message;
  return typeof m === 'string' ? m : undefined;
}

/** Who answered for a target, in messages. */
function answeredBy(target: Target): string {
  if (target.kind === 'remote') return `node '${target.nodeId}' for '${target.clusterId}'`;
  if (target.kind === 'static') return `upstream ${endpointForClients(target.url!)} for '${target.clusterId}'`;
  return `engine for model '${target.clusterId}'`;
}

/**
 * An error answer as the client's error body: at most `ERROR_BODY_LIMIT` of it is read; one longer is not an error
 * body a client can be given (it is cut off, its connection closed) and answers 502 `answer_too_large`.
 */
async function errorBody(
  res: HttpAnswer,
  target: Target,
): Promise<{ error: { message: string; type: string; code: string | number } }> {
  let text = '';
  try {
    text = await res.text(ERROR_BODY_LIMIT);
  } catch (err) {
    if (err instanceof AnswerTooLarge) throw tooLarge(err, `${answeredBy(target)} answered ${res.status} and`);
  }
  let message = text.slice(0, 2000) || res.statusText;
  let code: string | undefined;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string; code?: string } | string; message?: string };
    message = (typeof parsed.error === 'string' ? parsed.error : parsed.error?.message) ?? parsed.message ?? message;
    if (typeof parsed.error === 'object' && typeof parsed.error.code === 'string') code = parsed.error.code;
  } catch {
    /* not JSON: keep the text */
  }
  // A remote node's errors are already ours: pass them through; an engine's get said where they came from.
  if (target.kind === 'remote' && code)
    return { error: { message, type: res.status >= 500 ? 'server_error' : 'invalid_request_error', code } };
  return {
    error: {
      message: `engine for model '${target.clusterId}' answered ${res.status}: ${message}`,
      type: res.status >= 500 ? 'server_error' : 'invalid_request_error',
      code: res.status >= 500 ? 'engine_error' : 'engine_rejected',
    },
  };
}

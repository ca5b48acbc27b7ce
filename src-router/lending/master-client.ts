import { AnswerTooLarge } from '../backends/answer-limits';
import { CallEnd, goneOf } from '../backends/call-end';
import { getUrl, type HttpAnswer, postJson } from '../backends/http-call';
import {
  borrowedAnswerStateSchema,
  cutAnswerSchema,
  eventAnswerSchema,
  peerRead,
  relayAnswerSchema,
  withdrawAnswerSchema,
} from '../contract';
import { NODE_HEADER, QUEUE_MS_HEADER, queueMsOf } from '../contract/answer-facts';
import type { BorrowedAnswer, MasterPort, RelayAnswer, RelayRequest, WithdrawResult } from './ports';
import type { LeaseGrant, ModelRef, NodeState, Trigger } from './types';

/** A slave's way to its master's decider and relay (LEASE-2, LEASE-5), with the cluster token and bounded time. */
export function masterClient(
  masterUrl: string,
  token: string,
  opts: { eventTimeoutMs: number; relayTimeoutMs: number },
): MasterPort {
  const base = masterUrl.replace(/\/+$/, '');
  const post = (path: string, body: unknown, timeoutMs: number, signal?: AbortSignal) =>
    callPeer(`${base}${path}`, token, body, timeoutMs, signal);
  return {
    // Every queue event of an enrolled model says so to the master: the request path's client, not fetch.
    // The owner's state goes with it: the master need not poll this node back for it (LEASE-3).
    async event(owner: ModelRef, trigger: Trigger, state?: () => NodeState): Promise<LeaseGrant | null> {
      const sent = stateOrNone(state);
      const { res, json } = await post(
        '/router/v1/node/offload/event',
        sent ? { owner, trigger, state: sent } : { owner, trigger },
        opts.eventTimeoutMs,
      );
      if (!res.ok)
        throw new Error(
          `master answered ${res.status}: ${String(typeof json === 'string' ? json : JSON.stringify(json)).slice(0, 200)}`,
        );
      const answer = peerRead(eventAnswerSchema).safeParse(json);
      if (!answer.success)
        throw new Error(
          `master answered something that is not a lease: ${answer.error.issues[0]?.path.join('.') || '(root)'}: ${answer.error.issues[0]?.message}`,
        );
      return answer.data.lease as LeaseGrant | null;
    },
    async cutOff(requestId: string): Promise<boolean> {
      const { res, json } = await post('/router/v1/node/offload/cutoff', { requestId }, opts.eventTimeoutMs);
      return res.ok && peerRead(cutAnswerSchema).safeParse(json).data?.cut === true;
    },
    async cancel(requestId: string): Promise<void> {
      await post('/router/v1/node/offload/cancel', { requestIds: [requestId] }, opts.eventTimeoutMs);
    },
    async relay(req: RelayRequest, signal: AbortSignal): Promise<RelayAnswer> {
      try {
        const { res, json } = await post('/router/v1/node/offload/relay', req, opts.relayTimeoutMs, signal);
        // The master refuses a relay (400, 401, 429) before it forwards anything; a 5xx — its own failure mid-relay, or
        // a proxy's 502/504 on its time-out — may come after the helper got the request.
        if (res.status >= 500) return { kind: 'unknown', message: `master relay answered ${res.status}` };
        if (!res.ok)
          return { kind: 'refused', reason: 'forward_failed', message: `master relay answered ${res.status}` };
        const answer = peerRead(relayAnswerSchema).safeParse(json);
        // A 200 that is not a relay answer came from something between (or a broken master) after the relay was sent.
        if (!answer.success)
          return { kind: 'unknown', message: 'master relay answered 200 with something that is not a relay answer' };
        return withQueueMs(answer.data as RelayAnswer, res.headers.get(QUEUE_MS_HEADER));
      } catch (err) {
        if (signal.aborted) throw err;
        // Refused before a byte was sent: nothing reached the master, so nothing runs anywhere. Any other break (the
        // master died, the connection reset, no answer in time) may come after the helper got the request.
        if (neverSent(err))
          return {
            kind: 'refused',
            reason: 'helper_unreachable',
            message: `master relay unreachable: ${(err as Error).message}`,
          };
        return { kind: 'unknown', message: `the master relay broke off: ${causeOf(err)}` };
      }
    },
  };
}

/** The owner's state to send with an event; none when it cannot be read now (the master then polls for it). */
function stateOrNone(state?: () => NodeState): NodeState | undefined {
  try {
    return state?.();
  } catch {
    return undefined;
  }
}

/**
 * One call to another node's API with the cluster token, through the request path's client, ended by `signal` or
 * after `timeoutMs`: the answer and its body (parsed JSON, else the text). Rejects when it could not be had. A body
 * makes it a POST, none a GET. Every call of lending between nodes goes through here (or `forwardToHelper`).
 */
export async function callPeer(
  url: string,
  token: string,
  body: unknown,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<{ res: HttpAnswer; json: unknown }> {
  const end = new CallEnd(signal ? goneOf(signal) : undefined, timeoutMs);
  try {
    const auth = { authorization: `Bearer ${token}` };
    const res = await (body === undefined ? getUrl(url, end, auth) : postJson(url, body, end, auth));
    // Bounded (`ANSWER_LIMIT`: a relay answer carries a whole answer): past it this rejects with `AnswerTooLarge`.
    const text = await res.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {
      /* not JSON: the text */
    }
    return { res, json };
  } finally {
    end.clear();
  }
}

/**
 * The master's forward of a lent request to a remote helper's worker API (the owner's model named in a header). Only
 * a definite non-delivery (no connection could be made) is a refusal; a forward that broke off after it may have
 * reached the helper — a reset, its time-out, an answer cut short — is `unknown`, resolved at the helper before anyone
 * runs it again.
 */
export async function forwardToHelper(
  helperUrl: string,
  token: string,
  req: RelayRequest,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<RelayAnswer> {
  const paths = {
    chat: '/v1/chat/completions',
    completion: '/v1/completions',
    embedding: '/v1/embeddings',
    image: '/v1/images/generations',
  } as const;
  let res: HttpAnswer;
  const end = new CallEnd(goneOf(signal), timeoutMs);
  try {
    res = await postJson(
      `${helperUrl.replace(/\/+$/, '')}/router/v1/node/worker${paths[req.endpoint]}`,
      { ...req.json, model: req.helper.model, stream: false },
      end,
      {
        authorization: `Bearer ${token}`,
        'x-routerdesk-borrowed-from': `${req.owner.nodeId}/${req.owner.model}`,
        'x-routerdesk-request-id': req.requestId,
      },
    );
  } catch (err) {
    end.clear();
    if (signal.aborted) throw err;
    if (neverSent(err)) return { kind: 'refused', reason: 'helper_unreachable', message: (err as Error).message };
    return { kind: 'unknown', message: `the forward to the helper broke off: ${causeOf(err)}` };
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    // An answer past the bound cannot be relayed: the owner's client gets a 502 saying so.
    if (err instanceof AnswerTooLarge)
      return {
        kind: 'answered',
        status: 502,
        body: {
          error: {
            message: `helper node answered for '${req.owner.model}' and ${err.message}`,
            type: 'server_error',
            code: err.code,
          },
        },
      };
    if (signal.aborted) throw err;
    return { kind: 'unknown', message: `the helper's answer broke off: ${causeOf(err)}` };
  } finally {
    end.clear();
  }
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* keep text */
  }
  const error = (body as { error?: { code?: string; message?: string; reason?: string } })?.error;
  if (res.status === 409 && error?.code === 'offload_returned')
    return { kind: 'returned', reason: error.reason ?? 'returned' };
  // The helper has this request already (a relay delivered twice): resolved at the helper like a broken forward.
  if (res.status === 409 && error?.code === 'duplicate_request')
    return { kind: 'unknown', message: 'the helper already had this request' };
  // An error answer that names no node is not the helper's: something between (a proxy's 502/504 on its own
  // time-out) answered, and the helper may still run the request.
  if (!res.ok && !res.headers.get(NODE_HEADER))
    return { kind: 'unknown', message: `an answer ${res.status} that is not the helper's (no ${NODE_HEADER} header)` };
  if (!res.ok)
    return {
      kind: 'refused',
      reason: 'forward_failed',
      message: `helper answered ${res.status}: ${(body as { error?: { message?: string } })?.error?.message ?? text.slice(0, 200)}`,
    };
  return withQueueMs({ kind: 'answered', status: res.status, body }, res.headers.get(QUEUE_MS_HEADER));
}

/** An answered relay with the helper's wait, from the header that carries it between nodes. */
function withQueueMs(answer: RelayAnswer, header: string | null): RelayAnswer {
  const queueMs = queueMsOf(header);
  return answer.kind === 'answered' && queueMs !== null ? { ...answer, queueMs } : answer;
}

const causeOf = (err: unknown) =>
  (err as { cause?: { code?: string; message?: string } }).cause?.code ??
  (err as { cause?: { message?: string } }).cause?.message ??
  (err as Error).message;

/** The peer's port refused the connection: no process listens there (a helper that is gone, and its work with it). */
export const connectRefused = (err: unknown) => (err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';

/** The connection was never made (so the request was never sent). */
function neverSent(err: unknown): boolean {
  const code = (err as { cause?: { code?: string } }).cause?.code;
  return (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN' ||
    code === 'EHOSTUNREACH' ||
    code === 'ENETUNREACH'
  );
}

/**
 * Withdraws lent requests at a helper directly (HOLD-4 / HELPER-5 from the master; an owner whose relay broke after
 * sending): each is `withdrawn` (it never starts there) or `started`. Rejects when the helper does not answer.
 */
export async function withdrawAt(
  helperUrl: string,
  token: string,
  requestIds: string[],
): Promise<Record<string, WithdrawResult>> {
  const { res, json } = await callPeer(
    `${helperUrl.replace(/\/+$/, '')}/router/v1/node/offload/withdraw`,
    token,
    { requestIds },
    3_000,
  );
  if (!res.ok) throw new Error(`helper answered ${res.status}`);
  return peerRead(withdrawAnswerSchema).parse(json).results;
}

/** The lease the master holds now for `owner` (none: null): what a slave applies when a lease is pushed to it. */
export async function leaseAt(masterUrl: string, token: string, owner: ModelRef): Promise<LeaseGrant | null> {
  const q = new URLSearchParams({ node: owner.nodeId, model: owner.model });
  const { res, json } = await callPeer(
    `${masterUrl.replace(/\/+$/, '')}/router/v1/node/offload/lease?${q}`,
    token,
    undefined,
    3_000,
  );
  if (!res.ok) throw new Error(`master answered ${res.status}`);
  return peerRead(eventAnswerSchema).parse(json).lease as LeaseGrant | null;
}

/** The answer of a borrowed request at its helper, long-polled up to `waitMs` (an owner whose relay broke). */
export async function answerAt(
  helperUrl: string,
  token: string,
  requestId: string,
  waitMs: number,
): Promise<BorrowedAnswer> {
  const q = new URLSearchParams({ request: requestId, wait: String(Math.round(waitMs)) });
  const { res, json } = await callPeer(
    `${helperUrl.replace(/\/+$/, '')}/router/v1/node/offload/answer?${q}`,
    token,
    undefined,
    waitMs + 5_000,
  );
  if (!res.ok) throw new Error(`helper answered ${res.status}`);
  return peerRead(borrowedAnswerStateSchema).parse(json) as BorrowedAnswer;
}

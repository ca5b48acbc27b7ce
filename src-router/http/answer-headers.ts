import type { FastifyReply } from 'fastify';
import { LENT_TO_HEADER, NODE_HEADER, QUEUE_MS_HEADER } from '../contract/answer-facts';
import type { ServeOutput } from '../serve';
import { SERVED_BY_HEADER } from '../serve/guardian-route';

/** The trailers of an answer, asked for when its stream ends (`writeStream`). */
export type AnswerTrailers = () => Record<string, string>;

/**
 * The headers of an executor's answer (GUARD-2): `x-routerdesk-node`, `x-routerdesk-queue-ms`, when lent
 * `x-routerdesk-lent-to`, and a guardian's `x-routerdesk-served-by`; a stream's on the raw response (streams are
 * written past fastify), any other answer's on the reply. The queue time goes as a trailer instead when the head went
 * out before it was known: a stream whose head went out with its queue comments (`queue-notice`), or a forwarded
 * stream whose slave sends it as a trailer (`facts.queueMsAtEnd`, known once the stream ended). Returns those
 * trailers, for the stream's end.
 */
export function answerHeaders(reply: FastifyReply, out: ServeOutput): AnswerTrailers {
  const headers: Record<string, string> = {};
  if (out.servedBy) headers[SERVED_BY_HEADER] = out.servedBy;
  const facts = out.facts;
  if (facts) {
    headers[NODE_HEADER] = facts.node;
    if (facts.queueMs !== null && !facts.queueMsAtEnd) headers[QUEUE_MS_HEADER] = String(Math.round(facts.queueMs));
    if (facts.lentTo) headers[LENT_TO_HEADER] = facts.lentTo;
  }
  const trailers: AnswerTrailers = () =>
    facts?.queueMs != null ? { [QUEUE_MS_HEADER]: String(Math.round(facts.queueMs)) } : ({} as Record<string, string>);
  if (reply.raw.headersSent) return trailers;
  if (facts?.queueMsAtEnd && out.kind === 'sse') headers.trailer = QUEUE_MS_HEADER;
  // A stream is written past fastify: its head is the raw response's; any other answer goes out through fastify's.
  const raw = out.kind === 'sse';
  for (const name in headers) {
    if (raw) reply.raw.setHeader(name, headers[name]);
    else reply.header(name, headers[name]);
  }
  return facts?.queueMsAtEnd && out.kind === 'sse' ? trailers : () => ({});
}

/** Paths whose answers carry the headers even when no executor ran (a 404, a 400, the model list): this node's. */
export const CLIENT_API_PATH = /^\/(v1|api)\/|^\/router\/v1\/node\/worker\//;

/** An answer of the client APIs that no executor produced names this node, with no wait. */
export function defaultAnswerHeaders(reply: FastifyReply, nodeId: string): void {
  if (reply.hasHeader(NODE_HEADER)) return;
  reply.header(NODE_HEADER, nodeId);
  reply.header(QUEUE_MS_HEADER, '0');
}

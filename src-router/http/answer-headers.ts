import type { FastifyReply } from 'fastify';
import { LENT_TO_HEADER, NODE_HEADER, QUEUE_MS_HEADER, type ServeOutput } from '../serve';
import { SERVED_BY_HEADER } from '../serve/guardian-route';

/**
 * The headers of an executor's answer (issue #15, GUARD-2): `x-routerdesk-node`, `x-routerdesk-queue-ms`, when lent
 * `x-routerdesk-lent-to`, and a guardian's `x-routerdesk-served-by`. Set on the raw response too: streams are written
 * past fastify. A stream whose headers already went out with its queue comments (`queue-notice`) gets its queue
 * time as a trailer instead.
 */
export function answerHeaders(reply: FastifyReply, out: ServeOutput): void {
  const headers: Record<string, string> = {};
  if (out.servedBy) headers[SERVED_BY_HEADER] = out.servedBy;
  if (out.facts) {
    headers[NODE_HEADER] = out.facts.node;
    if (out.facts.queueMs !== null) headers[QUEUE_MS_HEADER] = String(Math.round(out.facts.queueMs));
    if (out.facts.lentTo) headers[LENT_TO_HEADER] = out.facts.lentTo;
  }
  if (reply.raw.headersSent) {
    if (headers[QUEUE_MS_HEADER]) reply.raw.addTrailers({ [QUEUE_MS_HEADER]: headers[QUEUE_MS_HEADER] });
    return;
  }
  for (const [name, value] of Object.entries(headers)) {
    reply.header(name, value);
    reply.raw.setHeader(name, value);
  }
}

/** Paths whose answers carry the headers even when no executor ran (a 404, a 400, the model list): this node's. */
export const CLIENT_API_PATH = /^\/(v1|api)\/|^\/router\/v1\/node\/worker\//;

/** Issue #15: an answer of the client APIs that no executor produced names this node, with no wait. */
export function defaultAnswerHeaders(reply: FastifyReply, nodeId: string): void {
  if (reply.hasHeader(NODE_HEADER)) return;
  reply.header(NODE_HEADER, nodeId);
  reply.header(QUEUE_MS_HEADER, '0');
}

/**
 * Issue #15: every answer of the client APIs says where it ran and how long it waited. The executor puts these facts
 * on its output; `http/answer-headers` writes them as headers.
 */

/** The node that ran the request (a forwarded request: the node the master forwarded it to). */
export const NODE_HEADER = 'x-routerdesk-node';
/** Milliseconds the request waited in the router queue and for the lane before its engine (or helper) took it. */
export const QUEUE_MS_HEADER = 'x-routerdesk-queue-ms';
/** A lent request: the helper that answered it, `node/model` (its local ID there). */
export const LENT_TO_HEADER = 'x-routerdesk-lent-to';

export interface AnswerFacts {
  node: string;
  /** null: not known (a forwarded request to a node of an older build). */
  queueMs: number | null;
  lentTo: string | null;
}

/** The facts of another node's answer (a forwarded request), from its headers; `fallbackNode` when it sent none. */
export function factsFromHeaders(headers: { get(name: string): string | null }, fallbackNode: string): AnswerFacts {
  const queue = Number(headers.get(QUEUE_MS_HEADER) ?? NaN);
  return { node: headers.get(NODE_HEADER) || fallbackNode, queueMs: Number.isFinite(queue) && queue >= 0 ? queue : null, lentTo: headers.get(LENT_TO_HEADER) || null };
}

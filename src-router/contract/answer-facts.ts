/**
 * Every answer of the client APIs says where it ran and how long it waited. The executor puts these facts
 * on its output; `http/answer-headers` writes them as headers. Here (not in serve/) because the lending relay
 * carries a helper's wait between nodes under the same header.
 */

/** The node that ran the request (a forwarded request: the node the master forwarded it to). */
export const NODE_HEADER = 'x-routerdesk-node';
/**
 * Milliseconds the request waited in router queues and for the lane before an engine took it: a lent one's wait at
 * its owner before it was lent plus its wait at the helper (when the helper said), a forwarded one's at the slave.
 */
export const QUEUE_MS_HEADER = 'x-routerdesk-queue-ms';
/** A lent request: the helper that answered it, `node/model` (its local ID there). */
export const LENT_TO_HEADER = 'x-routerdesk-lent-to';
/**
 * A master's worker call for a client stream that takes queue comments: the slave sends its own while the request
 * waits in its router queue (then its head goes out first and its queue time comes as a trailer). Without it (an
 * older master) a worker stream's head waits for the answer and carries every fact.
 */
export const QUEUE_COMMENTS_HEADER = 'x-routerdesk-queue-comments';

/** The SSE comment line of a stream waiting at `position` in a router queue (clients ignore `:` lines). */
export const queueCommentLine = (position: number): string => `: queued, position ${position}`;

/** The position a queue comment line names; null for any other line. */
export function positionOfComment(line: string): number | null {
  const m = /^: queued, position (\d+)$/.exec(line);
  return m ? Number(m[1]) : null;
}

export interface AnswerFacts {
  node: string;
  /** null: not known (a forwarded request to a node of an older build). */
  queueMs: number | null;
  lentTo: string | null;
  /** The queue time is known only once the stream ended (a forwarded stream whose slave sends it as a trailer). */
  queueMsAtEnd?: boolean;
}

/** The facts of another node's answer (a forwarded request), from its headers; `fallbackNode` when it sent none. */
export function factsFromHeaders(headers: { get(name: string): string | null }, fallbackNode: string): AnswerFacts {
  const queueMs = queueMsOf(headers.get(QUEUE_MS_HEADER));
  const atEnd =
    queueMs === null &&
    (headers.get('trailer') ?? '')
      .toLowerCase()
      .split(/\s*,\s*/)
      .includes(QUEUE_MS_HEADER);
  return {
    node: headers.get(NODE_HEADER) || fallbackNode,
    queueMs,
    lentTo: headers.get(LENT_TO_HEADER) || null,
    ...(atEnd ? { queueMsAtEnd: true } : {}),
  };
}

/** A queue time as a header or trailer carries it; null when absent or not a number. */
export function queueMsOf(value: string | string[] | null | undefined): number | null {
  const n = Number(typeof value === 'string' ? value : NaN);
  return Number.isFinite(n) && n >= 0 ? n : null;
}

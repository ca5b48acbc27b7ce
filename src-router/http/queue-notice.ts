import type { FastifyReply } from 'fastify';
import { queueCommentLine } from '../contract/answer-facts';

/** Least time between two queue comments of one stream. */
export const QUEUE_COMMENT_GAP_MS = 1000;

/**
 * Pure: the SSE comment a stream waiting in a router queue sends now, or null — none once it no longer
 * waits (`position` null), and at most one per `gapMs`. Clients ignore SSE comments (lines starting with `:`).
 */
export function queueComment(
  position: number | null,
  lastSentAt: number | null,
  now: number,
  gapMs = QUEUE_COMMENT_GAP_MS,
): string | null {
  if (position === null) return null;
  if (lastSentAt !== null && now - lastSentAt < gapMs) return null;
  return `${queueCommentLine(position)}\n\n`;
}

/**
 * The queue comments of one streamed request (SSE formats only): when the executor says it waits in a router queue
 * (`waiting`), the stream's head goes out (`open`) with a first comment, then one comment a second while it still
 * waits; none once it runs or `stop()` was called. Its headers then went out before the answer's facts were known:
 * `answerHeaders` sends the queue time as a trailer.
 */
export class QueueNotice {
  private position: (() => number | null) | null = null;
  private node: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastSentAt: number | null = null;

  constructor(
    private readonly reply: FastifyReply,
    /** Sends the stream's head, naming `node` (the node whose queue holds it; absent: this one). */
    private readonly open: (node: string | undefined) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** The stream's head went out with a comment: the answer must be written in-band. */
  get started(): boolean {
    return this.reply.raw.headersSent;
  }

  readonly waiting = (position: () => number | null, node?: string): void => {
    if (this.timer) return;
    this.position = position;
    this.node = node;
    this.tick();
    this.timer = setInterval(() => this.tick(), QUEUE_COMMENT_GAP_MS);
    this.timer.unref();
  };

  stop(): void {
    clearInterval(this.timer);
    this.position = null;
  }

  private tick(): void {
    const res = this.reply.raw;
    const now = this.now();
    const comment = queueComment(this.position?.() ?? null, this.lastSentAt, now);
    if (this.position?.() == null || res.destroyed) return this.stop();
    if (!comment) return;
    if (!res.headersSent) this.open(this.node);
    res.write(comment);
    this.lastSentAt = now;
  }
}

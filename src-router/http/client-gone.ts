import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { type ClientGone, OnceHooks } from '../backends/call-end';
import { cutForStalling } from './write-out';

/**
 * The client of this reply going away before the response is finished (cancels the engine request), and whether it
 * took its answer (`onDelivered`). One listener on the response; an AbortSignal only when something asks for `signal`.
 */
export function clientGone(reply: FastifyReply): ClientGone {
  return new ReplyGone(reply.raw);
}

class ReplyGone implements ClientGone {
  private gone = false;
  private readonly hooks = new OnceHooks();
  private ctl: AbortController | undefined;
  private delivered: ((undelivered: string | null) => void) | undefined;
  /** Set when the connection is done with the answer: null when taken (or left), else why not. */
  private undelivered: string | null | undefined;

  constructor(res: ServerResponse) {
    res.once('close', () => {
      const cut = cutForStalling(res);
      this.undelivered = cut ?? null;
      this.delivered?.(this.undelivered);
      this.delivered = undefined;
      if (res.writableFinished && !cut) return;
      this.gone = true;
      this.hooks.fire();
    });
  }

  onDelivered(fn: (undelivered: string | null) => void): void {
    if (this.undelivered !== undefined) fn(this.undelivered);
    else this.delivered = fn;
  }

  get aborted(): boolean {
    return this.gone;
  }

  onAbort(fn: () => void): () => void {
    return this.hooks.add(fn);
  }

  get signal(): AbortSignal {
    if (!this.ctl) {
      const ctl = (this.ctl = new AbortController());
      this.onAbort(() => ctl.abort());
    }
    return this.ctl.signal;
  }
}

import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { type ClientGone, OnceHooks } from '../backends/call-end';

/**
 * The client of this reply going away before the response is finished (cancels the engine request). One listener on
 * the response; an AbortSignal only when something asks for `signal`.
 */
export function clientGone(reply: FastifyReply): ClientGone {
  return new ReplyGone(reply.raw);
}

class ReplyGone implements ClientGone {
  private gone = false;
  private readonly hooks = new OnceHooks();
  private ctl: AbortController | undefined;

  constructor(res: ServerResponse) {
    res.once('close', () => {
      if (res.writableFinished) return;
      this.gone = true;
      this.hooks.fire();
    });
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

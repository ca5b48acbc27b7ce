import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { ClientGone } from '../backends/call-end';

/**
 * The client of this reply going away before the response is finished (cancels the engine request). One listener on
 * the response; an AbortSignal only when something asks for `signal` (issue #14).
 */
export function clientGone(reply: FastifyReply): ClientGone {
  return new ReplyGone(reply.raw);
}

class ReplyGone implements ClientGone {
  private gone = false;
  private readonly hooks: (() => void)[] = [];
  private ctl: AbortController | undefined;

  constructor(res: ServerResponse) {
    res.once('close', () => {
      if (res.writableFinished) return;
      this.gone = true;
      for (const fn of this.hooks.splice(0)) fn();
    });
  }

  get aborted(): boolean {
    return this.gone;
  }

  onAbort(fn: () => void): () => void {
    if (this.gone) {
      fn();
      return () => {};
    }
    this.hooks.push(fn);
    return () => {
      const i = this.hooks.indexOf(fn);
      if (i >= 0) this.hooks.splice(i, 1);
    };
  }

  get signal(): AbortSignal {
    if (!this.ctl) {
      const ctl = (this.ctl = new AbortController());
      this.onAbort(() => ctl.abort());
    }
    return this.ctl.signal;
  }
}

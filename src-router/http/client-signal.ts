import type { FastifyReply } from 'fastify';

/** Aborts when the client goes away before the response is finished (cancels the engine request). */
export function clientSignal(reply: FastifyReply): AbortSignal {
  const ctl = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) ctl.abort();
  });
  return ctl.signal;
}

import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { redactUrl } from './redact';

/** Answers whose client stopped taking bytes and that were cut off for it, with why (read by `clientGone`). */
const stalled = new WeakMap<ServerResponse, string>();

/** Why this answer was cut off (its client took nothing of it for the write timeout); undefined when it was not. */
export function cutForStalling(res: ServerResponse): string | undefined {
  return stalled.get(res);
}

/** How far a socket's writing has come: changes whenever the client takes bytes (or more are queued). */
function progressOf(socket: Socket): string {
  const handle = (socket as unknown as { _handle?: { writeQueueSize?: number } | null })._handle;
  return `${socket.writableLength}/${handle?.writeQueueSize ?? 0}`;
}

/**
 * Cuts off the client of `res` when bytes of the answer wait for it and it takes none of them for `ms` (checked
 * every quarter of `ms`): its socket is destroyed, which releases what was buffered for it, and `onStall` says so.
 * Stops when the answer is written out or the connection closes.
 */
export function watchWriteOut(res: ServerResponse, ms: number, onStall: () => void): void {
  const socket = res.socket;
  if (!socket || socket.destroyed || res.writableFinished) return;
  let last = progressOf(socket);
  let since = performance.now();
  const timer = setInterval(
    () => {
      if (socket.destroyed || res.writableFinished) return stop();
      const now = progressOf(socket);
      if (!(socket.writableLength > 0) || now !== last) {
        last = now;
        since = performance.now();
        return;
      }
      if (performance.now() - since < ms) return;
      stop();
      stalled.set(res, `client stopped reading the answer: cut off after ${Math.round(ms / 1000)} s`);
      onStall();
      res.destroy();
    },
    Math.max(10, Math.floor(ms / 4)),
  );
  timer.unref();
  const stop = () => {
    clearInterval(timer);
    res.off('finish', stop);
    res.off('close', stop);
  };
  res.once('finish', stop);
  res.once('close', stop);
}

/**
 * server.write_timeout for every answer fastify sends (JSON, text, files, piped streams; streams of events bound
 * their own writes, `writeStream`): a client that takes nothing of an answer whose bytes wait for it for that long is
 * cut off and logged (`client_stalled`). A streamed body is watched from its first byte; any other from when it was
 * handed over, and only when part of it is still waiting then (most answers are written out at once).
 */
export function installWriteTimeout(app: FastifyInstance, ms: number): void {
  if (typeof ms !== 'number' || !(ms > 0)) return;
  app.addHook('onSend', (request, reply, payload, done) => {
    const res = reply.raw;
    const onStall = () =>
      request.log.warn(
        { code: 'client_stalled', url: redactUrl(request.url) },
        `client took nothing of the answer for ${Math.round(ms / 1000)} s: cut off`,
      );
    const piped =
      payload !== null && typeof payload === 'object' && typeof (payload as { pipe?: unknown }).pipe === 'function';
    if (piped) watchWriteOut(res, ms, onStall);
    else
      res.once('prefinish', () => {
        if ((res.socket?.writableLength ?? 0) > 0) watchWriteOut(res, ms, onStall);
      });
    done(null, payload);
  });
}

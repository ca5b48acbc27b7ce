import { createServer } from 'node:http';

/** How long the old address keeps sending browsers on after the node moved (a console following it polls it). */
export const MOVED_NOTICE_MS = 10 * 60_000;

export interface MovedNotice {
  close(): Promise<void>;
}

/**
 * After a restart onto another port: the old address answers every request with a redirect to the new one, for a
 * bounded time. A console page that asked for the move polls its own origin (the only one its content policy lets it
 * call) and, seeing the redirect, knows the node listens again at the new address and goes there. The target is fixed
 * (never built from the request), so this is no open redirect; nothing else is told. Null when the old address cannot
 * be bound (someone else took it).
 */
export function startMovedNotice(
  host: string,
  port: number,
  to: string,
  lifetimeMs = MOVED_NOTICE_MS,
): Promise<MovedNotice | null> {
  const location = `${to.replace(/\/+$/, '')}/`;
  const server = createServer((request, reply) => {
    request.resume();
    reply.writeHead(307, {
      location,
      'cache-control': 'no-store',
      'content-type': 'text/plain; charset=utf-8',
      'x-content-type-options': 'nosniff',
      connection: 'close',
    });
    reply.end(`This node moved to ${location}\n`);
  });
  server.keepAliveTimeout = 1_000;
  server.headersTimeout = 5_000;
  server.requestTimeout = 5_000;
  const close = () =>
    new Promise<void>((resolve) => {
      clearTimeout(timer);
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const timer = setTimeout(() => void close(), lifetimeMs);
  timer.unref();
  return new Promise((resolve) => {
    server.once('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
    server.listen(port, host, () => {
      server.unref();
      resolve({ close });
    });
  });
}

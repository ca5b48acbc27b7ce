import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports handed out for a process to bind next (an engine, a node in a test cluster). They come from below the
 * kernel's ephemeral range: a port from `listen(0)` lies inside it, where any outgoing connection may take it as its
 * source port between the check and the bind, and on a busy loopback (pollers, pooled clients) that happens. Each
 * process walks its own stretch of the range from a random start, so two processes rarely try the same port, and a
 * port that is in use is skipped by the bind check.
 */
const SPAN = 12_000;

function ephemeralStart(): number {
  try {
    const lo = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(lo) && lo > 0) return lo;
  } catch {
    // not Linux: every other system's ephemeral range starts at 49152 or above
  }
  return 32_768;
}

const top = ephemeralStart();
const bottom = Math.max(10_000, top - SPAN);
let cursor = bottom + Math.floor(Math.random() * Math.max(1, top - bottom));

function canBind(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen({ port, host, exclusive: true }, () => {
      const addr = srv.address();
      const bound = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(bound));
    });
  });
}

/** A port that was free a moment ago on `host` (the caller binds it next). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  if (top - bottom >= 1_000) {
    for (let tries = 0; tries < 200; tries++) {
      cursor = cursor + 1 >= top ? bottom : cursor + 1;
      try {
        return await canBind(cursor, host);
      } catch {
        // in use: the next one
      }
    }
  }
  return canBind(0, host);
}

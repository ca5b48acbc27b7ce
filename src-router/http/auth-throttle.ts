import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * Failed token checks per client address: after `maxFailures` different wrong tokens from one address within
 * `windowMs`, every token check from it is answered 429 (with the seconds left) until that window ends; a right token
 * then does not pass either, else the answer would still tell a guess right from wrong. The same wrong token sent
 * again is no new guess (a console tab left open on a node that was restarted with a new token, a peer with an old
 * cluster token): it keeps getting 401 and blocks no one. A success resets nothing, so a client that holds one token
 * cannot clear the count of its guesses at another. Loopback is not exempt: any local process can reach it. The table
 * holds at most `maxClients` addresses: the one that failed longest ago goes first.
 */

export interface AuthThrottleOptions {
  maxFailures: number;
  windowMs: number;
  maxClients: number;
  now?: () => number;
}

interface Failures {
  /** When the window of these failures began. */
  since: number;
  /** Short hashes of the different wrong tokens (at most `maxFailures`). */
  tokens: Set<string>;
}

export const AUTH_THROTTLE_DEFAULTS = { maxFailures: 10, windowMs: 60_000, maxClients: 10_000 } as const;

export class AuthThrottle {
  private readonly clients = new Map<string, Failures>();
  private readonly now: () => number;

  constructor(private readonly o: AuthThrottleOptions = AUTH_THROTTLE_DEFAULTS) {
    this.now = o.now ?? Date.now;
  }

  /** Whole seconds until `client` may present a token again; 0 when it may now. */
  retryAfter(client: string): number {
    const f = this.live(client);
    if (!f || f.tokens.size < this.o.maxFailures) return 0;
    return Math.max(1, Math.ceil((f.since + this.o.windowMs - this.now()) / 1000));
  }

  /** Counts a wrong token from `client` (one it sent before in this window counts once). */
  fail(client: string, token: string): void {
    const f = this.live(client) ?? { since: this.now(), tokens: new Set<string>() };
    if (f.tokens.size < this.o.maxFailures)
      f.tokens.add(createHash('sha256').update(token).digest('base64').slice(0, 12));
    // Re-inserted, so the Map's order is the order of last failure and the first entry is the one to drop.
    this.clients.delete(client);
    this.clients.set(client, f);
    while (this.clients.size > this.o.maxClients) this.clients.delete(this.clients.keys().next().value!);
  }

  /** Addresses in the table (for tests of its bound). */
  get size(): number {
    return this.clients.size;
  }

  private live(client: string): Failures | undefined {
    const f = this.clients.get(client);
    if (f && this.now() - f.since >= this.o.windowMs) {
      this.clients.delete(client);
      return undefined;
    }
    return f;
  }
}

/**
 * The address a failure is counted against: an IPv4 address (also written IPv4-mapped), or an IPv6 address's /64
 * prefix — one host usually holds a whole /64, so counting single IPv6 addresses would count nothing.
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (isIPv4(ip) || !isIPv6(ip)) return ip;
  return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, in lower-case hex without leading zeros. */
function expandIPv6(ip: string): string[] {
  const [head, tail = ''] = ip.split('%')[0].toLowerCase().split('::');
  const part = (s: string) => (s ? s.split(':') : []);
  const left = part(head);
  const right = ip.includes('::') ? part(tail) : [];
  // A trailing dotted IPv4 part stands for two groups.
  const width = (groups: string[]) => groups.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const groups = ip.includes('::')
    ? [...left, ...Array<string>(8 - width(left) - width(right)).fill('0'), ...right]
    : left;
  return groups.map((g) => (g.includes('.') ? g : parseInt(g, 16).toString(16)));
}

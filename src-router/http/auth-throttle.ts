import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * Failed token checks per client address. A right token is always taken: the caller compares it first, in constant
 * time, before asking this table anything, so no number of wrong tokens from an address (an attacker behind the same
 * NAT as a slave, a neighbour on the same IPv6 network) ever refuses the right one. Only wrong tokens are slowed:
 * after `maxFailures` different wrong tokens from one address within `windowMs`, each further wrong token is answered
 * 429 (with the seconds left) instead of 401 until that window ends. The same wrong token sent again is no new guess
 * (a console tab left open on a node that was restarted with a new token, a peer with an old cluster token): it
 * keeps getting 401. A success resets nothing, so a client that holds one token cannot clear the count of its guesses
 * at another. Loopback is not exempt: any local process can reach it.
 *
 * An IPv4 address is one budget. An IPv6 address has its own budget and also counts against its /64 network, which
 * gets `prefixFactor` times as many (one host can hold a whole /64 and rotate through it; its neighbours on the same
 * /64 still have their own address's budget for most of it). The table holds at most `maxClients` keys: the one that
 * failed longest ago goes first.
 */

export interface AuthThrottleOptions {
  maxFailures: number;
  windowMs: number;
  maxClients: number;
  /** How many times `maxFailures` an IPv6 /64 gets in all (default 10). */
  prefixFactor?: number;
  now?: () => number;
}

interface Failures {
  /** When the window of these failures began. */
  since: number;
  /** Short hashes of the different wrong tokens (at most the key's budget). */
  tokens: Set<string>;
}

export const AUTH_THROTTLE_DEFAULTS = {
  maxFailures: 10,
  windowMs: 60_000,
  maxClients: 10_000,
  prefixFactor: 10,
} as const;

export class AuthThrottle {
  private readonly clients = new Map<string, Failures>();
  private readonly now: () => number;

  constructor(private readonly o: AuthThrottleOptions = AUTH_THROTTLE_DEFAULTS) {
    this.now = o.now ?? Date.now;
  }

  /**
   * A token check from `ip` that failed (a wrong `token`, or none: ''): whole seconds to wait when the address is
   * over its budget (answer 429 with them), else 0 (answer 401). A wrong token not sent before in the window counts.
   */
  refuse(ip: string, token: string): number {
    const wait = this.retryAfter(ip);
    if (wait > 0) return wait;
    if (token) this.fail(ip, token);
    return 0;
  }

  /** Whole seconds until wrong tokens from `ip` are answered 401 again; 0 when they are now. */
  retryAfter(ip: string): number {
    let wait = 0;
    for (const { key, budget } of this.keysOf(ip)) {
      const f = this.live(key);
      if (f && f.tokens.size >= budget)
        wait = Math.max(wait, Math.max(1, Math.ceil((f.since + this.o.windowMs - this.now()) / 1000)));
    }
    return wait;
  }

  /** Counts a wrong token from `ip` (one it sent before in this window counts once). */
  fail(ip: string, token: string): void {
    const hash = createHash('sha256').update(token).digest('base64').slice(0, 12);
    for (const { key, budget } of this.keysOf(ip)) {
      const f = this.live(key) ?? { since: this.now(), tokens: new Set<string>() };
      if (f.tokens.size < budget) f.tokens.add(hash);
      // Re-inserted, so the Map's order is the order of last failure and the first entry is the one to drop.
      this.clients.delete(key);
      this.clients.set(key, f);
    }
    while (this.clients.size > this.o.maxClients) this.clients.delete(this.clients.keys().next().value!);
  }

  /** Keys in the table (for tests of its bound). */
  get size(): number {
    return this.clients.size;
  }

  private keysOf(ip: string): { key: string; budget: number }[] {
    return throttleKeys(ip).map((key, i) => ({
      key,
      budget: i === 0 ? this.o.maxFailures : this.o.maxFailures * (this.o.prefixFactor ?? 10),
    }));
  }

  private live(key: string): Failures | undefined {
    const f = this.clients.get(key);
    if (f && this.now() - f.since >= this.o.windowMs) {
      this.clients.delete(key);
      return undefined;
    }
    return f;
  }
}

/**
 * The keys a failure from `ip` counts against: an IPv4 address (also written IPv4-mapped) alone; an IPv6 address,
 * then its /64 network.
 */
export function throttleKeys(ip: string): string[] {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return [mapped[1]];
  if (isIPv4(ip) || !isIPv6(ip)) return [ip];
  const groups = expandIPv6(ip);
  return [groups.join(':'), `${groups.slice(0, 4).join(':')}::/64`];
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

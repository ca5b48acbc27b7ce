import { randomBytes } from 'node:crypto';
import { CONSOLE_CODE_MAX_TTL_MS } from '../contract';
import { sameSecret } from './auth';

export interface ConsoleCodeOptions {
  /** How long a code may wait for its exchange. */
  ttlMs?: number;
  /** Codes kept at once (waiting or spent); issuing one more forgets the oldest. */
  max?: number;
  now?(): number;
}

export type CodeRedemption = 'ok' | 'used' | 'unknown';

interface Issued {
  code: string;
  expiresAt: number;
  used: boolean;
  keep: boolean;
}

export const CONSOLE_CODE_TTL_MS = 60_000;
/** How long a code printed for an operator to open (or follow a moved node with) stays good. */
export const PRINTED_CODE_TTL_MS = CONSOLE_CODE_MAX_TTL_MS;
const CONSOLE_CODE_MAX = 16;

/**
 * One-time codes a browser exchanges for the console token (`POST /router/v1/console/session`), so the link a local
 * command opens carries no token: each code is random, works once, expires, and only a bounded number are kept.
 * A spent code is remembered until it would have expired, so a second exchange is told it was used.
 */
export class ConsoleCodes {
  private readonly issued: Issued[] = [];
  private readonly ttlMs: number;
  private readonly max: number;
  private readonly now: () => number;

  constructor(opts: ConsoleCodeOptions = {}) {
    this.ttlMs = opts.ttlMs ?? CONSOLE_CODE_TTL_MS;
    this.max = Math.max(1, opts.max ?? CONSOLE_CODE_MAX);
    this.now = opts.now ?? Date.now;
  }

  /**
   * A new code, valid for `ttlMs` (default: the store's). `keep`: it survives `clear` — the code an operator's Settings
   * save gets to follow the node to its new address, whose console token that same save may change.
   */
  issue(ttlMs = this.ttlMs, opts: { keep?: boolean } = {}): string {
    this.prune();
    const code = randomBytes(16).toString('base64url');
    this.issued.push({ code, expiresAt: this.now() + ttlMs, used: false, keep: opts.keep === true });
    while (this.issued.length > this.max) this.issued.shift();
    return code;
  }

  /** Spends `code`: 'ok' the first time within its life, 'used' after that, 'unknown' when wrong, expired or forgotten. */
  redeem(code: string): CodeRedemption {
    this.prune();
    const hit = this.issued.find((i) => sameSecret(code, i.code));
    if (!hit) return 'unknown';
    if (hit.used) return 'used';
    hit.used = true;
    return 'ok';
  }

  /** Forgets every code but the kept ones: they stood for a console token that is no longer the node's. */
  clear(): void {
    for (let i = this.issued.length - 1; i >= 0; i--) if (!this.issued[i].keep) this.issued.splice(i, 1);
  }

  /** Codes kept now (waiting or spent, not expired). */
  get size(): number {
    this.prune();
    return this.issued.length;
  }

  private prune(): void {
    const t = this.now();
    for (let i = this.issued.length - 1; i >= 0; i--) if (this.issued[i].expiresAt <= t) this.issued.splice(i, 1);
  }
}

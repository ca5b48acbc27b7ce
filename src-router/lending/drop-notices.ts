import type { WithdrawResult } from './ports';
import type { ModelRef } from './types';

/** A request an owner took back from a helper it could not reach, and whom to tell. */
export interface TakenBack {
  requestId: string;
  linkId: string | null;
  owner: ModelRef;
  helper: ModelRef;
  at: number;
}

export interface DropNoticeDeps {
  /** The helper's withdraw call (`POST /router/v1/node/offload/withdraw`); rejects when it does not answer. */
  withdraw(helperUrl: string, requestIds: string[]): Promise<Record<string, WithdrawResult>>;
  /** The helper answered for a request: `withdrawn` (it never starts there) or `started` (it ran there too). */
  told(t: TakenBack, result: WithdrawResult): void;
  now(): number;
  /** How often the helpers still owed a notice are tried. */
  everyMs?: number;
  /** A notice older than this is given up (the helper forgets withdrawn ids after as long). */
  keepMs?: number;
  /** At most this many notices are owed at once; the oldest goes first. */
  max?: number;
}

/**
 * Requests an owner took back from a helper that neither the master nor the owner could reach: each helper is told to
 * drop them (a withdrawal) as soon as it answers again, so one still waiting there never starts, and one that ran there
 * too is counted. Bounded in count and age; one round of notices at a time.
 */
export class DropNotices {
  private readonly owed = new Map<string, Map<string, TakenBack>>();
  private size = 0;
  private timer?: NodeJS.Timeout;
  private round: Promise<void> | null = null;

  constructor(private readonly d: DropNoticeDeps) {}

  add(helperUrl: string, t: TakenBack): void {
    const ids = this.owed.get(helperUrl) ?? new Map<string, TakenBack>();
    this.owed.set(helperUrl, ids);
    if (!ids.has(t.requestId)) this.size++;
    ids.set(t.requestId, t);
    if (this.size > (this.d.max ?? 10_000)) this.dropOldest();
    this.timer ??= setInterval(() => void this.send(), this.d.everyMs ?? 2_000);
    this.timer.unref?.();
  }

  /** Notices still owed, per helper URL. */
  pending(): Record<string, string[]> {
    return Object.fromEntries([...this.owed].map(([url, ids]) => [url, [...ids.keys()]]));
  }

  /** One round: every helper owed notices is told; one that does not answer is tried again next round. */
  send(): Promise<void> {
    this.round ??= this.sendRound().finally(() => (this.round = null));
    return this.round;
  }

  private async sendRound(): Promise<void> {
    const oldest = this.d.now() - (this.d.keepMs ?? 10 * 60_000);
    for (const [url, ids] of [...this.owed]) {
      for (const [id, t] of ids) if (t.at < oldest) this.forget(url, id);
      if (!ids.size) continue;
      let results: Record<string, WithdrawResult>;
      try {
        results = await this.d.withdraw(url, [...ids.keys()]);
      } catch {
        continue;
      }
      for (const [id, t] of [...ids]) {
        const r = results[id];
        if (r === undefined) continue;
        this.forget(url, id);
        this.d.told(t, r);
      }
    }
    if (this.size === 0) this.stop();
  }

  private forget(url: string, id: string): void {
    const ids = this.owed.get(url);
    if (!ids?.delete(id)) return;
    this.size--;
    if (!ids.size) this.owed.delete(url);
  }

  private dropOldest(): void {
    let old: [string, TakenBack] | undefined;
    for (const [url, ids] of this.owed) for (const t of ids.values()) if (!old || t.at < old[1].at) old = [url, t];
    if (old) this.forget(old[0], old[1].requestId);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

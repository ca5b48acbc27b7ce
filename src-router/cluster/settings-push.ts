import type { FastifyBaseLogger } from 'fastify';

/**
 * Desired → applied for what the master decides and slaves apply (LEASE-1: links; GUARD-1: guardian settings). The
 * master pushes `{ version, epoch, … }` to every healthy slave after each change and when membership changes. Pushes
 * of one master run carry its epoch (`node_id:start-time`): a slave drops one older than the last it applied (two
 * quick edits may arrive out of order); a restarted master (new epoch) always wins, even with a lower version.
 */

export const newEpoch = (nodeId: string, startedAt = Date.now()) => `${nodeId}:${startedAt}`;

/** `node_id:start-time` → its parts (an absent or odd epoch: no node, time 0). */
export function splitEpoch(epoch: string): [string, number] {
  const i = epoch.lastIndexOf(':');
  if (i <= 0) return ['', 0];
  const t = Number(epoch.slice(i + 1));
  return [epoch.slice(0, i), Number.isFinite(t) ? t : 0];
}

/** A slave's check of one kind of push: which master it comes from, and whether it is older than what it applied. */
export class PushGate {
  private applied = { epoch: '', version: -1 };

  /**
   * A push whose epoch names another node than the master this slave registered with is refused ('wrong_master');
   * within one master, a push from an older run than the one applied is stale (false), and so is an older version
   * of the same run. True: apply it (it is recorded as applied).
   */
  accept(version: number, from = '', masterId: string | null = null): boolean | 'wrong_master' {
    const [fromNode, fromStart] = splitEpoch(from);
    if (masterId !== null && fromNode !== masterId) return 'wrong_master';
    const [appliedNode, appliedStart] = splitEpoch(this.applied.epoch);
    if (from && appliedNode === fromNode && fromStart < appliedStart) return false;
    if (from && from === this.applied.epoch && version < this.applied.version) return false;
    this.applied = { epoch: from, version };
    return true;
  }
}

/** The master's push to each healthy slave: `body(slave)` (per slave, or the same for all), fire and forget, failures logged. */
export function pushToSlaves(
  slaves: readonly { nodeId: string; url: string }[],
  path: string,
  token: string,
  body: (slave: { nodeId: string; url: string }) => unknown,
  log: FastifyBaseLogger,
  what: string,
): void {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  for (const s of slaves) {
    void fetch(`${s.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body(s)), signal: AbortSignal.timeout(5_000) }).catch((err: Error) =>
      log.warn({ nodeId: s.nodeId }, `${what} push failed: ${err.message}`),
    );
  }
}

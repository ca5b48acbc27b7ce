import type { FastifyBaseLogger } from 'fastify';

/**
 * Desired → applied for what the master decides and slaves apply (LEASE-1: links; GUARD-1: guardian settings). The
 * master pushes `{ version, epoch, … }` to every healthy slave after each change and when membership changes; a slave
 * takes the push as a nudge and reads the settings from its configured master (`settings-pull`). Settings of one
 * master run carry its epoch (`node_id:start-time`).
 */

export const newEpoch = (nodeId: string, startedAt = Date.now()) => `${nodeId}:${startedAt}`;

/** `node_id:start-time` → its parts (an absent or odd epoch: no node, time 0). */
export function splitEpoch(epoch: string): [string, number] {
  const i = epoch.lastIndexOf(':');
  if (i <= 0) return ['', 0];
  const t = Number(epoch.slice(i + 1));
  return [epoch.slice(0, i), Number.isFinite(t) ? t : 0];
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
    void fetch(`${s.url}${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body(s)),
      signal: AbortSignal.timeout(5_000),
    }).catch((err: Error) => log.warn({ nodeId: s.nodeId }, `${what} push failed: ${err.message}`));
  }
}

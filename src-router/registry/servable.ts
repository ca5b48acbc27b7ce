import type { ClusterEntry } from './identity-merge';

/**
 * A catalog entry that can be served now: some replica is available (its node answers the master's polls, and a
 * local one is not held after failed starts). The client model lists show only these; the console shows every
 * entry, marked unavailable.
 */
export const servable = (e: ClusterEntry): boolean => e.replicas.some((r) => r.available);

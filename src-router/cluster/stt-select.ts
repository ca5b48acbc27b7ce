/**
 * Selector-less speech-to-text scheduling (STT-1..5), pure: a snapshot of current nodes in, one route out.
 * Order: a loaded local STT config; a loaded healthy remote one with the shortest whole-node active+queued;
 * a wholly idle capable node; all busy → the local queue when this node has an STT config, else the shortest
 * remote whole-node queue. Equal candidates rotate round-robin (the cursor is state the caller keeps).
 */

export interface SttConfig {
  localId: string;
  clusterId: string;
  loaded: boolean;
}

export interface SttNode {
  nodeId: string;
  local: boolean;
  healthy: boolean;
  /** Whether the node serves authenticated runtime status (STT-5: without it, explicit-model requests only). */
  runtimeStatus: boolean;
  /** Whole-node requests at engines, including routes reserved for requests not yet started (STT-4). */
  active: number;
  queued: number;
  configs: SttConfig[];
}

export type SttRule = 'local_loaded' | 'remote_loaded' | 'idle_node' | 'local_queue' | 'shortest_remote_queue';

export interface SttChoice {
  nodeId: string;
  config: SttConfig;
  rule: SttRule;
}

/**
 * Reserved requests a node's own count does not show yet. A reservation holds from the choice until the request
 * ends, and the node counts the request itself once it arrives, so only reservations beyond its count are added.
 */
export function unseenReservations(reserved: number, counted: number): number {
  return Math.max(0, reserved - counted);
}

/** Round-robin cursors per tie group. */
export type RoundRobin = Map<string, number>;

function rotate<T>(rr: RoundRobin, key: string, items: T[]): T {
  const i = rr.get(key) ?? 0;
  rr.set(key, i + 1);
  return items[i % items.length];
}

/** Candidates with the smallest value of `by`, in a stable order. */
function minimal<T>(items: T[], by: (t: T) => number): T[] {
  const best = Math.min(...items.map(by));
  return items.filter((t) => by(t) === best);
}

const byNode = (a: { nodeId: string }, b: { nodeId: string }) =>
  a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0;

export function selectStt(nodes: SttNode[], rr: RoundRobin): SttChoice | undefined {
  const capable = nodes.filter((n) => n.runtimeStatus && n.configs.length > 0 && (n.local || n.healthy)).sort(byNode);
  const local = capable.find((n) => n.local);
  const remotes = capable.filter((n) => !n.local);
  const load = (n: SttNode) => n.active + n.queued;

  const localLoaded = local?.configs.filter((c) => c.loaded) ?? [];
  if (local && localLoaded.length)
    return { nodeId: local.nodeId, config: rotate(rr, 'local_loaded', localLoaded), rule: 'local_loaded' };

  const loadedRemotes = remotes.filter((n) => n.configs.some((c) => c.loaded));
  if (loadedRemotes.length) {
    const n = rotate(rr, 'remote_loaded', minimal(loadedRemotes, load));
    return {
      nodeId: n.nodeId,
      config: rotate(
        rr,
        `remote_loaded:${n.nodeId}`,
        n.configs.filter((c) => c.loaded),
      ),
      rule: 'remote_loaded',
    };
  }

  const idle = capable.filter((n) => load(n) === 0);
  if (idle.length) {
    const n = rotate(rr, 'idle_node', idle);
    return { nodeId: n.nodeId, config: rotate(rr, `idle_node:${n.nodeId}`, n.configs), rule: 'idle_node' };
  }

  if (local) return { nodeId: local.nodeId, config: rotate(rr, 'local_queue', local.configs), rule: 'local_queue' };

  if (remotes.length) {
    const n = rotate(
      rr,
      'shortest_remote_queue',
      minimal(
        minimal(remotes, (r) => r.queued),
        (r) => r.active,
      ),
    );
    return {
      nodeId: n.nodeId,
      config: rotate(rr, `shortest_remote_queue:${n.nodeId}`, n.configs),
      rule: 'shortest_remote_queue',
    };
  }
  return undefined;
}

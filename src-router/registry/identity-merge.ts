import type { NodeModelRecord } from '../contract';

/** One node's records, as input to the merge. */
export interface NodeRecords {
  nodeId: string;
  /** The node this merge runs on: its group is preferred for the bare public ID. */
  local: boolean;
  healthy: boolean;
  url: string | null;
  records: NodeModelRecord[];
}

export interface Assignment {
  baseId: string;
  hashKey: string;
  clusterId: string;
}

export interface Replica {
  nodeId: string;
  local: boolean;
  url: string | null;
  record: NodeModelRecord;
  /** Node healthy (remote, HEALTH-4) and the record available (local lane, HEALTH-3). */
  available: boolean;
}

export interface ClusterEntry {
  id: string;
  baseId: string;
  hashKey: string;
  replicas: Replica[];
}

/** The identity of a config for merging: config hash and weights hash (ID-2). */
export const hashKeyOf = (r: Pick<NodeModelRecord, 'configHash' | 'modelHash'>) => `${r.configHash}:${r.modelHash ?? '-'}`;

/**
 * ID-2: records with the same public ID and identical hashes become one model with several replicas; a group with
 * different hashes gets a numeric suffix (`name-2`, `name-3`, …). Pure and deterministic: the same records and prior
 * assignments give the same result whatever the order of nodes, and prior assignments are never changed, so a suffix
 * stays with its group across restarts. Returns the entries and the assignments made now (to persist).
 */
export function mergeIdentities(nodes: NodeRecords[], prior: Assignment[]): { entries: ClusterEntry[]; added: Assignment[] } {
  const groups = new Map<string, Map<string, Replica[]>>();
  for (const n of nodes) {
    // Configs sharing a name on one node are replicas by the operator's choice (ID-4): one group per node and name.
    const nodeKey = new Map<string, string>();
    for (const record of n.records) nodeKey.set(record.publicId, [...new Set([...(nodeKey.get(record.publicId)?.split('+') ?? []), hashKeyOf(record)])].sort().join('+'));
    for (const record of n.records) {
      const byHash = groups.get(record.publicId) ?? new Map<string, Replica[]>();
      const key = nodeKey.get(record.publicId)!;
      const list = byHash.get(key) ?? [];
      list.push({ nodeId: n.nodeId, local: n.local, url: n.url, record, available: n.healthy && record.available });
      byHash.set(key, list);
      groups.set(record.publicId, byHash);
    }
  }
  const priorByKey = new Map(prior.map((a) => [`${a.baseId}\u0000${a.hashKey}`, a.clusterId]));
  const taken = new Set(prior.map((a) => a.clusterId));
  const baseIds = new Set(groups.keys());
  const added: Assignment[] = [];
  const entries: ClusterEntry[] = [];

  for (const baseId of [...groups.keys()].sort()) {
    const byHash = groups.get(baseId)!;
    const keys = [...byHash.keys()];
    const fresh = keys
      .filter((k) => !priorByKey.has(`${baseId}\u0000${k}`))
      .sort((a, b) => Number(hasLocal(byHash.get(b)!)) - Number(hasLocal(byHash.get(a)!)) || (a < b ? -1 : a > b ? 1 : 0));
    for (const hashKey of fresh) {
      let clusterId = baseId;
      for (let n = 2; taken.has(clusterId) || (clusterId !== baseId && baseIds.has(clusterId)); n++) clusterId = `${baseId}-${n}`;
      taken.add(clusterId);
      priorByKey.set(`${baseId}\u0000${hashKey}`, clusterId);
      added.push({ baseId, hashKey, clusterId });
    }
    for (const hashKey of keys) {
      const replicas = byHash.get(hashKey)!.sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : a.record.localId < b.record.localId ? -1 : 1));
      entries.push({ id: priorByKey.get(`${baseId}\u0000${hashKey}`)!, baseId, hashKey, replicas });
    }
  }
  entries.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { entries, added };
}

const hasLocal = (replicas: Replica[]) => replicas.some((r) => r.local);

/** An assignment moved to a group's new hash key: the group changed its config and keeps its cluster ID. */
export interface CarriedAssignment {
  baseId: string;
  from: string;
  to: string;
  clusterId: string;
}

/**
 * Which fresh assignments are a known group under a new hash key: a model whose config changed while the cluster ran
 * (its node took in an edited config). A fresh group in `next` that holds a replica (node and local ID) of a group in
 * `prev` with the same base ID, whose hash key no group of `next` has any more, takes over that group's cluster ID
 * instead of a new suffix. Pure.
 */
export function carriedAssignments(prev: readonly ClusterEntry[], next: readonly ClusterEntry[], added: readonly Assignment[]): CarriedAssignment[] {
  const present = new Set(next.map((e) => `${e.baseId}\u0000${e.hashKey}`));
  const replicaKeys = (e: ClusterEntry) => new Set(e.replicas.map((r) => `${r.nodeId}\u0000${r.record.localId}`));
  const used = new Set<ClusterEntry>();
  const out: CarriedAssignment[] = [];
  for (const a of added) {
    const fresh = next.find((e) => e.baseId === a.baseId && e.hashKey === a.hashKey);
    if (!fresh) continue;
    const mine = replicaKeys(fresh);
    const old = prev.find(
      (e) => !used.has(e) && e.baseId === a.baseId && e.hashKey !== a.hashKey && !present.has(`${e.baseId}\u0000${e.hashKey}`) && [...replicaKeys(e)].some((k) => mine.has(k)),
    );
    if (!old) continue;
    used.add(old);
    out.push({ baseId: a.baseId, from: old.hashKey, to: a.hashKey, clusterId: old.id });
  }
  return out;
}

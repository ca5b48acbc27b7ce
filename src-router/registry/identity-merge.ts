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

/** Counts the merge's steps (records placed, suffixes tried): its work grows linearly with its input, for tests. */
export interface MergeMeter {
  steps: number;
}

/** The identity of a config for merging: config hash and weights hash (ID-2). */
export const hashKeyOf = (r: Pick<NodeModelRecord, 'configHash' | 'modelHash'>) =>
  `${r.configHash}:${r.modelHash ?? '-'}`;

/**
 * ID-2: records with the same public ID and identical hashes become one model with several replicas; a group with
 * different hashes gets a numeric suffix (`name-2`, `name-3`, …). Pure and deterministic: the same records and prior
 * assignments give the same result whatever the order of nodes. A present group keeps its prior assignment, so a
 * suffix stays with its group across restarts and while the conflict lasts. A suffix is for a conflict only: a new
 * group (a config edited or replaced, on this node or a member) may take an ID whose prior group is present no more,
 * and that prior assignment is then dropped (its group, if it ever comes back, is new). Returns the entries, the
 * assignments made now (to persist) and the ones dropped (to forget).
 */
export function mergeIdentities(
  nodes: NodeRecords[],
  prior: Assignment[],
  meter: MergeMeter = { steps: 0 },
): { entries: ClusterEntry[]; added: Assignment[]; dropped: Assignment[] } {
  const groups = new Map<string, Map<string, Replica[]>>();
  for (const n of nodes) {
    // Configs sharing a name on one node are replicas by the operator's choice (ID-4): one group per node and name,
    // keyed by that name's distinct hash keys, sorted and joined once.
    const byName = new Map<string, { hashes: Set<string>; replicas: Replica[] }>();
    for (const record of n.records) {
      meter.steps++;
      let group = byName.get(record.publicId);
      if (!group) byName.set(record.publicId, (group = { hashes: new Set(), replicas: [] }));
      group.hashes.add(hashKeyOf(record));
      group.replicas.push({
        nodeId: n.nodeId,
        local: n.local,
        url: n.url,
        record,
        available: n.healthy && record.available,
      });
    }
    for (const [publicId, group] of byName) {
      const key = [...group.hashes].sort().join('+');
      const byHash = groups.get(publicId) ?? new Map<string, Replica[]>();
      const list = byHash.get(key);
      if (list) for (const r of group.replicas) list.push(r);
      else byHash.set(key, group.replicas);
      groups.set(publicId, byHash);
    }
  }
  const keyOf = (baseId: string, hashKey: string) => `${baseId}\u0000${hashKey}`;
  const present = new Set([...groups].flatMap(([baseId, byHash]) => [...byHash.keys()].map((k) => keyOf(baseId, k))));
  const priorByKey = new Map(prior.map((a) => [keyOf(a.baseId, a.hashKey), a.clusterId]));
  // IDs held by present groups are taken; an ID of a group gone may be handed out again (its assignment dropped).
  const taken = new Set(prior.filter((a) => present.has(keyOf(a.baseId, a.hashKey))).map((a) => a.clusterId));
  const absentById = new Map(
    prior.filter((a) => !present.has(keyOf(a.baseId, a.hashKey))).map((a) => [a.clusterId, a]),
  );
  const baseIds = new Set(groups.keys());
  const added: Assignment[] = [];
  const dropped: Assignment[] = [];
  const entries: ClusterEntry[] = [];

  for (const baseId of [...groups.keys()].sort()) {
    const byHash = groups.get(baseId)!;
    const keys = [...byHash.keys()];
    const withLocal = new Set(keys.filter((k) => byHash.get(k)!.some((r) => r.local)));
    const fresh = keys
      .filter((k) => !priorByKey.has(keyOf(baseId, k)))
      .sort((a, b) => Number(withLocal.has(b)) - Number(withLocal.has(a)) || (a < b ? -1 : a > b ? 1 : 0));
    // Suffixes below `next` were all found taken (and `taken` only grows): the search goes on from there.
    let next = 2;
    for (const hashKey of fresh) {
      let clusterId = baseId;
      meter.steps++;
      if (taken.has(clusterId)) {
        for (; ; next++) {
          meter.steps++;
          clusterId = `${baseId}-${next}`;
          if (!taken.has(clusterId) && !baseIds.has(clusterId)) break;
        }
        next++;
      }
      taken.add(clusterId);
      const gone = absentById.get(clusterId);
      if (gone) {
        dropped.push(gone);
        absentById.delete(clusterId);
      }
      priorByKey.set(keyOf(baseId, hashKey), clusterId);
      added.push({ baseId, hashKey, clusterId });
    }
    for (const hashKey of keys) {
      const replicas = byHash
        .get(hashKey)!
        .sort((a, b) =>
          a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : a.record.localId < b.record.localId ? -1 : 1,
        );
      entries.push({ id: priorByKey.get(keyOf(baseId, hashKey))!, baseId, hashKey, replicas });
    }
  }
  entries.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { entries, added, dropped };
}

import { carriedAssignments, mergeIdentities, type Assignment, type CarriedAssignment, type ClusterEntry, type NodeRecords } from './identity-merge';

/** Where suffix assignments are kept (the store in production). */
export interface AssignmentStore {
  suffixes(): Assignment[];
  saveSuffixes(rows: Assignment[]): void;
  /** Moves assignments to their group's new hash key (its config changed). */
  carrySuffixes(rows: CarriedAssignment[]): void;
}

/**
 * The models a node can route to: its own, plus (on a master) every healthy node's, merged by identity (ID-2).
 * Rebuilt whenever membership or local availability changes; replicas of one ID rotate (ID-4).
 */
export class ClusterCatalog {
  private entries: ClusterEntry[] = [];
  private byId = new Map<string, ClusterEntry>();
  private readonly cursor = new Map<string, number>();
  private prior: Assignment[];

  constructor(private readonly store: AssignmentStore) {
    this.prior = store.suffixes();
  }

  update(nodes: NodeRecords[]): void {
    let { entries, added } = mergeIdentities(nodes, this.prior);
    // A group whose config changed (taken in while running) keeps its cluster ID rather than getting a suffix.
    const carried = carriedAssignments(this.entries, entries, added);
    if (carried.length) {
      this.store.carrySuffixes(carried);
      const moved = new Map(carried.map((c) => [`${c.baseId}\u0000${c.from}`, c]));
      this.prior = this.prior.map((a) => {
        const c = moved.get(`${a.baseId}\u0000${a.hashKey}`);
        return c ? { baseId: a.baseId, hashKey: c.to, clusterId: c.clusterId } : a;
      });
      ({ entries, added } = mergeIdentities(nodes, this.prior));
    }
    if (added.length) {
      this.store.saveSuffixes(added);
      this.prior = [...this.prior, ...added];
    }
    this.entries = entries;
    this.byId = new Map(entries.map((e) => [e.id, e]));
  }

  all(): ClusterEntry[] {
    return this.entries;
  }

  get(id: string): ClusterEntry | undefined {
    return this.byId.get(id);
  }

  /** Round-robin over the given candidates of one cluster ID. */
  rotate<T>(id: string, eligible: T[]): T | undefined {
    if (!eligible.length) return undefined;
    const i = this.cursor.get(id) ?? 0;
    this.cursor.set(id, i + 1);
    return eligible[i % eligible.length];
  }
}

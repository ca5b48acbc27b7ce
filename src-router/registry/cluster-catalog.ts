import { type Assignment, type ClusterEntry, mergeIdentities, type NodeRecords } from './identity-merge';

/** Where suffix assignments are kept (the store in production). */
export interface AssignmentStore {
  suffixes(): Assignment[];
  /** Keeps new assignments, after forgetting `dropped` (assignments of groups gone whose ID was handed out again). */
  saveSuffixes(rows: Assignment[], dropped?: Assignment[]): void;
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
    const { entries, added, dropped } = mergeIdentities(nodes, this.prior);
    if (added.length) {
      this.store.saveSuffixes(added, dropped);
      const gone = new Set(dropped);
      this.prior = [...this.prior.filter((a) => !gone.has(a)), ...added];
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

import type { RequestRow } from './analytics';

/**
 * The newest request rows of each local model this node served, in memory: cost fits and token profiles
 * read them on every lending event and poll, and a scan of SQLite per read — flushing the batched writer first — cost
 * an enrolled model's owner more than its request. A model's rows are seeded from the store on its first read; from
 * then on each recorded row is appended in the form the store keeps (ms rounded, absent fields null), so a read
 * answers what the query over the store would (rows that finish in order; pruning drops the same rows here; a row
 * SQLite later refuses, or the writer drops when its queue overflows, is the difference).
 */
export class RecentRequests {
  private readonly byModel = new Map<string, RequestRow[]>();

  constructor(readonly capacity: number) {}

  /** Whether rows of this model are kept (it was read). */
  keeps(localId: string): boolean {
    return this.byModel.has(localId);
  }

  add(row: RequestRow): void {
    const rows = this.byModel.get(row.localId);
    if (!rows) return;
    rows.push(row);
    if (rows.length >= 2 * this.capacity) rows.splice(0, rows.length - this.capacity);
  }

  /** Drops the rows that finished before `before` (what pruning deletes from the store). */
  prune(before: number): void {
    for (const [id, rows] of this.byModel)
      this.byModel.set(
        id,
        rows.filter((r) => r.finishedAt >= before),
      );
  }

  /** The newest `limit` (at most `capacity`) rows that finished at or after `sinceMs`, oldest first. */
  read(localId: string, sinceMs: number, limit: number, seed: () => RequestRow[]): RequestRow[] {
    let rows = this.byModel.get(localId);
    if (!rows) this.byModel.set(localId, (rows = seed()));
    const out: RequestRow[] = [];
    const stop = Math.max(0, rows.length - this.capacity);
    for (let i = rows.length - 1; i >= stop && out.length < limit; i--)
      if (rows[i].finishedAt >= sinceMs) out.push(rows[i]);
    return out.reverse();
  }
}

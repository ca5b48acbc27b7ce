import type { FastifyBaseLogger } from 'fastify';
import type { RuntimeStatus } from '../contract';
import { type ClusterCatalog, type ClusterEntry, type Target, toTarget } from '../registry';
import type { NodeClient } from './node-client';
import { type RoundRobin, type SttNode, selectStt, unseenReservations } from './stt-select';

export interface SttSchedulerDeps {
  localNodeId: string;
  catalog: ClusterCatalog;
  client: NodeClient;
  /** This node's runtime status (no HTTP round trip to itself). */
  localStatus(): RuntimeStatus;
  /** Remote nodes that are healthy and serve runtime status. */
  remotes(): { nodeId: string; url: string }[];
  log: FastifyBaseLogger;
}

/**
 * STT-1..5 around the pure `selectStt`: reads runtime status from current nodes, reserves the chosen route before
 * its configuration loads (so two simultaneous requests do not both pick the same idle node), and releases the
 * reservation when the request ends.
 */
export class SttScheduler {
  private readonly rr: RoundRobin = new Map();
  private readonly reserved = new Map<string, number>();

  constructor(private readonly deps: SttSchedulerDeps) {}

  reservationsOn(nodeId: string): number {
    return this.reserved.get(nodeId) ?? 0;
  }

  async select(exclude: ReadonlySet<string>): Promise<Target | undefined> {
    const sttEntries = this.deps.catalog
      .all()
      .filter((e) => e.replicas.some((r) => r.record.capabilities.includes('transcription')));
    const statuses = await this.statuses(exclude);
    const nodes: SttNode[] = statuses.map(({ nodeId, local, status }) => {
      const configs = sttEntries.flatMap((e) =>
        e.replicas
          .filter((r) => r.nodeId === nodeId && r.available)
          .map((r) => ({
            localId: r.record.localId,
            clusterId: e.id,
            loaded: status.models.find((m) => m.localId === r.record.localId)?.loaded ?? false,
          })),
      );
      // The local status already counts local reservations; remote ones the node does not count yet are added here.
      const unseen = local ? 0 : unseenReservations(this.reservationsOn(nodeId), status.active + status.queued);
      return {
        nodeId,
        local,
        healthy: true,
        runtimeStatus: true,
        active: status.active + unseen,
        queued: status.queued,
        configs,
      };
    });
    const choice = selectStt(nodes, this.rr);
    if (!choice) return undefined;
    const entry = sttEntries.find((e) => e.id === choice.config.clusterId) as ClusterEntry;
    const replica = entry.replicas.find(
      (r) => r.nodeId === choice.nodeId && r.record.localId === choice.config.localId,
    )!;
    // Reserved in the same tick as the choice: a concurrent selection already sees it (STT-4).
    const release = this.reserve(choice.nodeId);
    this.deps.log.debug({ nodeId: choice.nodeId, model: entry.id, rule: choice.rule }, 'stt route chosen');
    return { ...toTarget(entry.id, replica), release };
  }

  /** Reserves a route (STT-4); the returned function releases it. */
  reserve(nodeId: string): () => void {
    this.reserved.set(nodeId, this.reservationsOn(nodeId) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.reserved.set(nodeId, Math.max(0, this.reservationsOn(nodeId) - 1));
    };
  }

  private async statuses(exclude: ReadonlySet<string>) {
    const local = exclude.has(this.deps.localNodeId)
      ? []
      : [{ nodeId: this.deps.localNodeId, local: true, status: this.deps.localStatus() }];
    const remote = await Promise.all(
      this.deps
        .remotes()
        .filter((r) => !exclude.has(r.nodeId))
        .map(async (r) => {
          try {
            return { nodeId: r.nodeId, local: false, status: await this.deps.client.runtimeStatus(r.url) };
          } catch (err) {
            this.deps.log.warn(
              { nodeId: r.nodeId },
              `runtime status unavailable, node left out of STT selection: ${(err as Error).message}`,
            );
            return undefined;
          }
        }),
    );
    return [...local, ...remote.filter((s) => s !== undefined)];
  }
}

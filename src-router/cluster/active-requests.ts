import type { ActiveRequestWire } from '../contract';
import type { Target } from '../registry';

/**
 * Every request this node runs for a model of its own (UI-2: the Nodes page lists them all, requests that go straight
 * to a backend included), from the moment the executor starts it until it ends. A model in a link has a router
 * queue that knows better: its requests are listed from the queue — at the engine as `router_queue`, the others are
 * held (queued / held / lent) and not active — so the tracker leaves them out. Requests this node forwards to another
 * node are that node's to list.
 */

interface Entry {
  id: string;
  model: string;
  clusterId: string;
  lane: string;
  startedAt: number;
  stream: boolean;
  via: 'backend' | 'static_route';
  lentFrom: { nodeId: string; model: string } | null;
}

/** What an enrolled model's router queue holds at its engine (`LendingNode.activeItems`). */
export interface QueueActive {
  model: string;
  id: string;
  stream: boolean;
  /** When it reached the engine, else its first arrival. */
  startedAt: number;
  /** A borrowed request's owner, `node/model`. */
  owner?: string;
}

export interface ActiveRequestsDeps {
  /** The runtime lane a local model runs on. */
  laneOf(localId: string): string;
  /** A model in a link (its router queue lists its requests). */
  enrolled(localId: string): boolean;
  publicIdOf(localId: string): string | undefined;
  now?(): number;
}

export class ActiveRequests {
  private readonly entries = new Map<number, Entry>();
  private seq = 0;

  constructor(private readonly deps: ActiveRequestsDeps) {}

  /**
   * Marks one request started (local or static targets; others are not this node's), listed under its request ID (the
   * one its analytics and decision rows name); the returned function ends it.
   */
  begin(
    target: Target,
    input: { stream: boolean; borrowedFrom?: { nodeId: string; model: string } },
    requestId: string,
  ): () => void {
    if (target.kind === 'remote') return () => {};
    const key = this.seq++;
    this.entries.set(key, {
      id: requestId,
      model: target.localId,
      clusterId: target.clusterId,
      lane: target.kind === 'static' ? 'static' : this.deps.laneOf(target.localId),
      startedAt: (this.deps.now ?? Date.now)(),
      stream: input.stream,
      via: target.kind === 'static' ? 'static_route' : 'backend',
      lentFrom: input.borrowedFrom ? { nodeId: input.borrowedFrom.nodeId, model: input.borrowedFrom.model } : null,
    });
    return () => void this.entries.delete(key);
  }

  /** This node's active requests, oldest first: untracked-by-queue ones from here, enrolled models' from their queues. */
  view(queueActive: readonly QueueActive[]): ActiveRequestWire[] {
    const straight = [...this.entries.values()].filter((e) => e.via === 'static_route' || !this.deps.enrolled(e.model));
    const queued = queueActive.map((q): Entry => {
      const [ownerNode, ...ownerModel] = (q.owner ?? '').split('/');
      return {
        id: q.id,
        model: q.model,
        clusterId: this.deps.publicIdOf(q.model) ?? q.model,
        lane: this.deps.laneOf(q.model),
        startedAt: q.startedAt,
        stream: q.stream,
        via: 'backend',
        lentFrom: q.owner ? { nodeId: ownerNode, model: ownerModel.join('/') } : null,
      };
    });
    return [...straight.map((e) => wire(e, e.via)), ...queued.map((e) => wire(e, 'router_queue'))].sort((a, b) =>
      a.started < b.started ? -1 : a.started > b.started ? 1 : 0,
    );
  }
}

const wire = (e: Entry, via: ActiveRequestWire['via']): ActiveRequestWire => ({
  id: e.id,
  model: e.model,
  clusterId: e.clusterId,
  lane: e.lane,
  started: new Date(e.startedAt).toISOString(),
  stream: e.stream,
  via,
  lentFrom: e.lentFrom,
});

import type { Supervisor } from '../backends';
import type { RuntimeStatus } from '../contract';
import type { ModelRegistry } from '../registry';
import type { ActivityTracker } from './activity';

/** The authenticated runtime status of this node (STT-1; lending polls it later). */
export function runtimeStatus(nodeId: string, registry: ModelRegistry, supervisor: Supervisor, activity: ActivityTracker, reservations = 0): RuntimeStatus {
  const models = registry.all().map((r) => ({ localId: r.localId, publicId: r.publicId, capabilities: [...r.config.capabilities], ...supervisor.modelLoad(r.localId) }));
  const lanes = supervisor.laneStatus();
  return {
    nodeId,
    at: Date.now(),
    models,
    active: lanes.reduce((n, l) => n + l.inflight, 0) + reservations,
    queued: lanes.reduce((n, l) => n + l.queued, 0),
    idleMs: activity.idleMs(),
  };
}

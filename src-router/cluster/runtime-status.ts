import type { Supervisor } from '../backends';
import type { RuntimeStatus } from '../contract';
import type { ModelRegistry } from '../registry';
import type { ActivityTracker } from './activity';
import { unseenReservations } from './stt-select';

/** The authenticated runtime status of this node (STT-1; lending polls it later). */
export function runtimeStatus(
  nodeId: string,
  registry: ModelRegistry,
  supervisor: Supervisor,
  activity: ActivityTracker,
  reservations = 0,
): RuntimeStatus {
  const models = registry.all().map((r) => ({
    localId: r.localId,
    publicId: r.publicId,
    capabilities: [...r.config.capabilities],
    ...supervisor.modelLoad(r.localId),
  }));
  const lanes = supervisor.laneStatus();
  const inflight = lanes.reduce((n, l) => n + l.inflight, 0);
  const queued = lanes.reduce((n, l) => n + l.queued, 0);
  return {
    nodeId,
    at: Date.now(),
    models,
    active: inflight + unseenReservations(reservations, inflight + queued),
    queued,
    idleMs: activity.idleMs(),
  };
}

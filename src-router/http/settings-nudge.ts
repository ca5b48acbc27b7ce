import type { FastifyRequest } from 'fastify';
import { splitEpoch } from '../cluster/settings-push';
import { type MasterSettings, RouterError } from '../contract';
import type { HttpDeps } from './deps';

/** A slave's way to its configured master's settings (absent on a master or standalone node). */
export interface SlaveSync {
  /** The node ID of the master at `cluster.master_url` (null while unknown). */
  masterId(): Promise<string | null>;
  /** Reads the master's links and guardian settings and applies them (see SettingsPuller). */
  pull(): Promise<MasterSettings>;
}

/**
 * A push of links or guardian settings to a slave is a nudge: its body is only compared, never applied. The slave
 * reads the settings from its configured master and applies those. A push in the name of another node is a 403
 * `not_my_master`; one that is not what the master has now is answered `stale: true` and logged, and changes nothing
 * the master did not decide.
 */
export async function nudgedByPush(
  deps: Pick<HttpDeps, 'nodeId' | 'slaveSync'>,
  request: FastifyRequest,
  kind: 'links' | 'guardians',
  push: { version: number; epoch?: string },
) {
  const sync = deps.slaveSync;
  if (!sync) throw new RouterError(403, 'wrong_role', `${kind} pushes: only a slave takes this`, 'permission_error');
  const masterId = await sync.masterId();
  const [fromNode] = splitEpoch(push.epoch ?? '');
  if (masterId === null || fromNode !== masterId) {
    request.log.warn(
      { kind, epoch: push.epoch ?? null, version: push.version, masterId },
      `${kind} push refused: not from the master this node is configured with`,
    );
    throw new RouterError(
      403,
      'not_my_master',
      `${kind} pushed as '${push.epoch ?? ''}' refused: node '${deps.nodeId}' takes ${kind} only from the master it is configured with`,
      'permission_error',
    );
  }
  const settings = await sync.pull().catch((err: Error) => {
    throw new RouterError(502, 'master_unreachable', `${kind} not read from the master: ${err.message}`);
  });
  const now = kind === 'links' ? settings.links : settings.guardians;
  const stale = push.epoch !== now.epoch || push.version !== now.version;
  // An older version of the master's own run is a push overtaken by the next change; anything else the master never sent.
  if (stale && (push.epoch !== now.epoch || push.version > now.version)) {
    request.log.warn(
      {
        kind,
        pushed: { epoch: push.epoch ?? null, version: push.version },
        master: { epoch: now.epoch ?? null, version: now.version },
      },
      `${kind} push ignored: it is not what the master has; the master's applied`,
    );
  }
  return { applied: now.version, stale };
}

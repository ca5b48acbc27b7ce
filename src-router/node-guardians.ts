import type { FastifyBaseLogger } from 'fastify';
import type { Membership } from './cluster/membership';
import { normalizeUrl } from './cluster/node-client';
import { newEpoch, PushGate, pushToSlaves } from './cluster/settings-push';
import type { NodeConfig } from './config';
import type { GuardiansPush } from './contract';
import { findModel } from './lending/links/link-validate';
import { fromPushed, GuardianStore, guardiansView, pushedSettings, resolveGuardian, type GuardianDirectory, type StoredGuardianRule } from './guardian';
import type { ClusterCatalog } from './registry';
import type { Db } from './store';

export interface GuardianWiringDeps {
  config: NodeConfig;
  db: Db;
  catalog: ClusterCatalog;
  log: FastifyBaseLogger;
  /** The master's view of its slaves (on a master). */
  membership?: Membership;
  /** On a slave: the node ID of the master it registered with (null while unknown). */
  masterId(): Promise<string | null>;
}

/**
 * Guardian settings on this node (GUARD-1, issue #10): the store, the master's pushes to its slaves (LEASE-1, with
 * each guardian's node URL), a slave's application of them, and the `GuardianDirectory` the request path asks. On a
 * master or standalone node the directory reads the store, membership URLs and catalog public IDs; on a slave, the
 * settings its master pushed.
 */
export function createGuardianWiring(d: GuardianWiringDeps) {
  const c = d.config.cluster;
  const self = c.node_id;
  const store = new GuardianStore(d.db);
  /** What the request path reads: the store's rows, re-read on every change. */
  let rules: StoredGuardianRule[] = store.list();
  const epoch = newEpoch(self);
  const gate = new PushGate();

  /** Where a node answers worker requests, as the master knows it (itself: its `cluster.public_url`, when set). */
  const urlOf = (nodeId: string) => (nodeId === self ? (c.public_url ?? null) : (d.membership?.urlOf(nodeId) ?? null));

  const push = () => {
    if (c.role !== 'master') return;
    const version = store.version();
    pushToSlaves(d.membership?.statusCapable() ?? [], '/router/v1/node/guardians', c.token, (s): GuardiansPush => ({ version, epoch, settings: pushedSettings(rules, d.catalog.all(), s.nodeId, urlOf) }), d.log, 'guardian settings');
  };

  const directory: GuardianDirectory = {
    guardianFor: (target) =>
      resolveGuardian(
        rules,
        target,
        c.role === 'slave'
          ? { url: (r) => r.url, publicId: (r) => r.publicId }
          : { url: (r) => (r.guardian.nodeId === self ? null : (d.membership?.urlOf(r.guardian.nodeId) ?? null)), publicId: (r) => findModel(d.catalog.all(), r.guardian)?.publicId ?? null },
      ),
  };

  return {
    store,
    directory,
    /** The version this node runs (a slave: the master's it applied), reported in its snapshot. */
    version: () => store.version(),
    view: () => guardiansView(store.version(), rules, d.catalog.all(), self),
    /** On the master after a catalog or membership change: push to every healthy slave. */
    push,
    /** After a site API change: read the store again and push. */
    changed(): void {
      rules = store.list();
      push();
    },
    /** A slave applies what its master pushed (see PushGate) and keeps it for its next start. */
    async applyPushed(p: GuardiansPush): Promise<boolean | 'wrong_master'> {
      const masterId = await d.masterId();
      const ok = gate.accept(p.version, p.epoch, masterId);
      if (ok !== true) return ok;
      store.replaceAll(p.version, p.settings.map((s) => fromPushed(s, self, { nodeId: masterId, url: c.master_url ? normalizeUrl(c.master_url) : null })));
      rules = store.list();
      return true;
    },
  };
}

export type GuardianWiring = ReturnType<typeof createGuardianWiring>;

import type { FastifyBaseLogger } from 'fastify';
import type { Membership } from './cluster/membership';
import { normalizeUrl } from './cluster/node-client';
import { newEpoch, pushToSlaves } from './cluster/settings-push';
import type { NodeConfig } from './config';
import type { GuardiansPush, MasterMember } from './contract';
import {
  fromPushed,
  type GuardianDirectory,
  GuardianStore,
  guardiansView,
  pushedSettings,
  resolveGuardian,
  type StoredGuardianRule,
} from './guardian';
import { findModel } from './lending/links/link-validate';
import type { ClusterCatalog } from './registry';
import type { Db } from './store';

export interface GuardianWiringDeps {
  config: NodeConfig;
  db: Db;
  catalog: ClusterCatalog;
  log: FastifyBaseLogger;
  /** The master's view of its slaves (on a master). */
  membership?: Membership;
}

/**
 * Guardian settings on this node (GUARD-1): the store, the master's pushes to its slaves (LEASE-1, with
 * each guardian's node URL), a slave's application of them, and the `GuardianDirectory` the request path asks. On a
 * master or standalone node the directory reads the store, membership URLs and catalog public IDs; on a slave, the
 * settings it read from its master, each guardian's URL taken from the master's member list by node ID.
 */
export function createGuardianWiring(d: GuardianWiringDeps) {
  const c = d.config.cluster;
  const self = c.node_id;
  const store = new GuardianStore(d.db);
  /** What the request path reads: the store's rows, re-read on every change. */
  let rules: StoredGuardianRule[] = store.list();
  const epoch = newEpoch(self);
  /** On a slave: what it applied last (its master's run and version, and the settings as resolved). */
  let applied = '';

  /** Where a node answers worker requests, as the master knows it (itself: its `cluster.public_url`, when set). */
  const urlOf = (nodeId: string) => (nodeId === self ? (c.public_url ?? null) : (d.membership?.urlOf(nodeId) ?? null));

  /** The settings as `receiver` runs them (the master's push and the answer to a slave's read). */
  const settingsFor = (receiver: string): GuardiansPush => ({
    version: store.version(),
    epoch,
    settings: pushedSettings(rules, d.catalog.all(), receiver, urlOf),
  });

  const push = () => {
    if (c.role !== 'master') return;
    pushToSlaves(
      d.membership?.statusCapable() ?? [],
      '/router/v1/node/guardians',
      c.token,
      (s) => settingsFor(s.nodeId),
      d.log,
      'guardian settings',
    );
  };

  const directory: GuardianDirectory = {
    guardianFor: (target) =>
      resolveGuardian(
        rules,
        target,
        c.role === 'slave'
          ? { url: (r) => r.url, publicId: (r) => r.publicId }
          : {
              url: (r) => (r.guardian.nodeId === self ? null : (d.membership?.urlOf(r.guardian.nodeId) ?? null)),
              publicId: (r) => findModel(d.catalog.all(), r.guardian)?.publicId ?? null,
            },
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
    settingsFor,
    /**
     * A slave applies the settings it read from its configured master, and keeps them for its next start. A
     * guardian's URL is where the master's member list says its node answers (the master itself: its listed URL, else
     * the configured `cluster.master_url`); a URL in the setting is not used. False: nothing changed.
     */
    applyPulled(p: GuardiansPush, members: readonly MasterMember[], masterId: string): boolean {
      const masterUrl = c.master_url ? normalizeUrl(c.master_url) : null;
      const memberUrl = (nodeId: string) =>
        members.find((m) => m.node_id === nodeId)?.url ?? (nodeId === masterId ? masterUrl : null);
      const next = p.settings.map((s) =>
        fromPushed({ ...s, guardian_url: s.guardian.node_id === self ? null : memberUrl(s.guardian.node_id) }, self, {
          nodeId: masterId,
          url: masterUrl,
        }),
      );
      const key = JSON.stringify([p.epoch, p.version, next]);
      if (key === applied) return false;
      applied = key;
      store.replaceAll(p.version, next);
      rules = store.list();
      return true;
    },
  };
}

export type GuardianWiring = ReturnType<typeof createGuardianWiring>;

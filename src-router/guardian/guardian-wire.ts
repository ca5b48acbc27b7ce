/**
 * Guardian settings between the store and the wire (GUARD-1, UI-4), pure: the site API's view, the pushed form for
 * one slave and back, and the directory's answer for a target. No IO: callers pass the catalog and node URLs.
 */
import type {
  GuardianDelete,
  GuardianEffective,
  GuardianPushedSetting,
  GuardianSetting,
  GuardiansView,
} from '../contract';
import { catalogModels, findModel } from '../lending/links/link-validate';
import type { ModelRef } from '../lending/types';
import type { ClusterEntry } from '../registry';
import type { GuardianScopeKey, ReplicatedGuardianRule, StoredGuardianRule } from './guardian-store';
import {
  effectiveGuardians,
  effectiveRule,
  type GuardianRule,
  guardianCandidates,
  type ResolvedGuardian,
} from './rules';

const toRef = (r: ModelRef) => ({ node_id: r.nodeId, model: r.model });

export const toGuardianSetting = (r: StoredGuardianRule): GuardianSetting => ({
  scope: r.scope,
  node_id: r.nodeId,
  model: r.model,
  guardian: toRef(r.guardian),
  updated_at: new Date(r.updatedAt).toISOString(),
});

/** A DELETE body → the key of the setting it names. */
export const scopeKeyOf = (d: GuardianDelete): GuardianScopeKey =>
  d.scope === 'cluster'
    ? { scope: 'cluster', nodeId: null, model: null }
    : d.scope === 'node'
      ? { scope: 'node', nodeId: d.node_id, model: null }
      : { scope: 'model', nodeId: d.node_id, model: d.model };

/** GET /router/v1/site/guardians: every setting, and for each text-only model its guardian and where it came from. */
export function guardiansView(
  version: number,
  rules: StoredGuardianRule[],
  catalog: ClusterEntry[],
  localNodeId: string,
): GuardiansView {
  const effective: GuardianEffective[] = effectiveGuardians(rules, catalog).map((e) => ({
    node_id: e.target.ref.nodeId,
    model: e.target.ref.model,
    public_id: e.target.publicId,
    guardian: e.rule ? toRef(e.rule.guardian) : null,
    from: e.rule?.scope ?? null,
    available: e.available,
  }));
  const nodes = [...new Set([localNodeId, ...catalogModels(catalog).map((m) => m.ref.nodeId)])].sort((a, b) =>
    a === localNodeId ? -1 : b === localNodeId ? 1 : a < b ? -1 : a > b ? 1 : 0,
  );
  return {
    version,
    settings: rules.map(toGuardianSetting),
    effective,
    candidates: guardianCandidates(catalog).map((m) => ({
      node_id: m.ref.nodeId,
      model: m.ref.model,
      public_id: m.publicId,
    })),
    nodes,
  };
}

/**
 * The settings as the master pushes them to `receiver`: each with the URL where its guardian's node answers (null
 * when that is the receiver itself) and its public ID in the master's catalog. `urlOf` knows the master's own URL
 * (null when it has no `cluster.public_url`: the slave then uses the master URL it registered with).
 */
export function pushedSettings(
  rules: GuardianRule[],
  catalog: ClusterEntry[],
  receiver: string,
  urlOf: (nodeId: string) => string | null,
): GuardianPushedSetting[] {
  return rules.map((r) => ({
    scope: r.scope,
    node_id: r.nodeId,
    model: r.model,
    guardian: toRef(r.guardian),
    guardian_url: r.guardian.nodeId === receiver ? null : urlOf(r.guardian.nodeId),
    guardian_public_id: findModel(catalog, r.guardian)?.publicId ?? null,
  }));
}

/**
 * A pushed setting as a slave keeps it. A guardian on the master pushed without a URL (a master without
 * `cluster.public_url`) answers at the URL this slave knows its master by.
 */
export function fromPushed(
  p: GuardianPushedSetting,
  self: string,
  master: { nodeId: string | null; url: string | null },
): ReplicatedGuardianRule {
  const onMaster = master.nodeId !== null && p.guardian.node_id === master.nodeId;
  return {
    scope: p.scope,
    nodeId: p.scope === 'cluster' ? null : p.node_id,
    model: p.scope === 'model' ? p.model : null,
    guardian: { nodeId: p.guardian.node_id, model: p.guardian.model },
    url: p.guardian.node_id === self ? null : (p.guardian_url ?? (onMaster ? master.url : null)),
    publicId: p.guardian_public_id,
  };
}

/** The directory's answer for `target` from rules and how to find a guardian's URL and public ID. */
export function resolveGuardian<R extends GuardianRule>(
  rules: readonly R[],
  target: ModelRef,
  where: { url(rule: R): string | null; publicId(rule: R): string | null },
): ResolvedGuardian | null {
  const rule = effectiveRule(rules, target);
  if (!rule) return null;
  return { guardian: { ...rule.guardian }, from: rule.scope, url: where.url(rule), publicId: where.publicId(rule) };
}

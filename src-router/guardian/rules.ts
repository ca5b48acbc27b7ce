/**
 * Guardian settings resolved (GUARD-1), pure: which guardian answers image requests for a model on a node, and
 * whether a setting may be stored. No IO: callers pass the settings and the catalog's models.
 */
import type { GuardianPut, GuardianScope } from '../contract';
import { type CatalogModel, catalogModels, describeRef, findModel } from '../lending/links/link-validate';
import type { ModelRef } from '../lending/types';
import type { ClusterEntry } from '../registry';

/** One setting inside the router: `nodeId` null for the cluster scope, `model` null unless the scope is a model. */
export interface GuardianRule {
  scope: GuardianScope;
  nodeId: string | null;
  model: string | null;
  guardian: ModelRef;
}

/** The guardian in force for a model, and the setting it came from. */
export interface ResolvedGuardian {
  guardian: ModelRef;
  from: GuardianScope;
  /** Where the guardian's node answers worker requests (null: this node, or not known here). */
  url: string | null;
  /** The guardian's public ID in the catalog, when known. */
  publicId: string | null;
}

/** What the request path asks: the guardian for a text-only model on a node (null: none is set). */
export interface GuardianDirectory {
  guardianFor(target: ModelRef): ResolvedGuardian | null;
}

const SPECIFICITY: GuardianScope[] = ['model', 'node', 'cluster'];

const matches = (rule: GuardianRule, target: ModelRef) =>
  rule.scope === 'cluster' || (rule.nodeId === target.nodeId && (rule.scope === 'node' || rule.model === target.model));

/** The most specific setting that applies to `target` (model, then node, then cluster); a model never guards itself. */
export function effectiveRule<R extends GuardianRule>(rules: readonly R[], target: ModelRef): R | null {
  for (const scope of SPECIFICITY) {
    const rule = rules.find((r) => r.scope === scope && matches(r, target));
    if (rule && !(rule.guardian.nodeId === target.nodeId && rule.guardian.model === target.model)) return rule;
  }
  return null;
}

/** A text model that cannot read images (GUARD-1): these get guardians. */
export const isTextOnly = (capabilities: readonly string[]) =>
  capabilities.includes('text') && !capabilities.includes('multimodal');

/** A guardian must be a multimodal text model (GUARD-1). */
export const canGuard = (capabilities: readonly string[]) => capabilities.includes('multimodal');

/** The key a setting is stored under: one setting per scope and target. */
export const ruleKey = (r: Pick<GuardianRule, 'scope' | 'nodeId' | 'model'>) =>
  `${r.scope}|${r.nodeId ?? ''}|${r.model ?? ''}`;

export interface GuardianSettingError {
  status: 400;
  code: 'guardian_not_found' | 'guardian_not_multimodal' | 'node_not_found' | 'model_not_found' | 'not_text_only';
  message: string;
  /** The body field at fault. */
  field: string;
}

export type GuardianSettingResult = { ok: true; value: GuardianRule } | { ok: false; error: GuardianSettingError };

/** Checks one PUT against the catalog: the guardian exists and reads images; the scope names a node or text-only model of the cluster. */
export function validateGuardianSetting(put: GuardianPut, catalog: ClusterEntry[]): GuardianSettingResult {
  const guardianRef = { nodeId: put.guardian.node_id, model: put.guardian.model };
  const fail = (code: GuardianSettingError['code'], field: string, message: string): GuardianSettingResult => ({
    ok: false,
    error: { status: 400, code, field, message },
  });
  const guardian = findModel(catalog, guardianRef);
  if (!guardian)
    return fail(
      'guardian_not_found',
      'guardian',
      `no model '${guardianRef.model}' on node '${guardianRef.nodeId}' in the cluster catalog`,
    );
  if (!canGuard(guardian.record.capabilities)) {
    return fail(
      'guardian_not_multimodal',
      'guardian',
      `${describeRef(guardianRef)} cannot read images (capabilities: ${guardian.record.capabilities.join(', ')}): a guardian must be a multimodal text model`,
    );
  }
  if (put.scope === 'cluster')
    return { ok: true, value: { scope: 'cluster', nodeId: null, model: null, guardian: guardianRef } };
  const models = catalogModels(catalog);
  if (!models.some((m) => m.ref.nodeId === put.node_id))
    return fail('node_not_found', 'node_id', `no node '${put.node_id}' in the cluster catalog`);
  if (put.scope === 'node')
    return { ok: true, value: { scope: 'node', nodeId: put.node_id, model: null, guardian: guardianRef } };
  const target = findModel(catalog, { nodeId: put.node_id, model: put.model });
  if (!target)
    return fail('model_not_found', 'model', `no model '${put.model}' on node '${put.node_id}' in the cluster catalog`);
  if (!isTextOnly(target.record.capabilities)) {
    return fail(
      'not_text_only',
      'model',
      `${describeRef(target.ref)} is not a text-only model (capabilities: ${target.record.capabilities.join(', ')}): guardians answer image requests for text-only models`,
    );
  }
  if (target.ref.nodeId === guardianRef.nodeId && target.ref.model === guardianRef.model)
    return fail('not_text_only', 'guardian', 'a model cannot be its own guardian');
  return { ok: true, value: { scope: 'model', nodeId: put.node_id, model: put.model, guardian: guardianRef } };
}

export interface EffectiveGuardian {
  target: CatalogModel;
  rule: GuardianRule | null;
  /** The guardian named is in the catalog now. */
  available: boolean;
}

/** Every text-only model of the catalog, by node and model, with the guardian in force for it (the GET view). */
export function effectiveGuardians(rules: readonly GuardianRule[], catalog: ClusterEntry[]): EffectiveGuardian[] {
  return catalogModels(catalog)
    .filter((m) => isTextOnly(m.record.capabilities))
    .sort((x, y) => x.ref.nodeId.localeCompare(y.ref.nodeId) || x.ref.model.localeCompare(y.ref.model))
    .map((target) => {
      const rule = effectiveRule(rules, target.ref);
      return { target, rule, available: !!rule && !!findModel(catalog, rule.guardian) };
    });
}

/** Models that may be named as guardians: the multimodal text models of the catalog. */
export const guardianCandidates = (catalog: ClusterEntry[]): CatalogModel[] =>
  catalogModels(catalog).filter((m) => canGuard(m.record.capabilities));

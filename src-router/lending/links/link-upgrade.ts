/**
 * LINK-5 and after. Earlier releases stored symmetric routing groups; store migration 3 (`store/migrations.ts`,
 * which must stay in the store layer) turns each cross-node pair into two links with weights 'different' and
 * acknowledged, because no catalog exists while the store opens. `refreshLinkWeights` computes the real weights once
 * the catalog knows both ends, and keeps them current when a node's weights change.
 */
import type { ClusterEntry } from '../../registry';
import type { StoredLink } from './link-schema';
import type { LinkStore } from './link-store';
import { findModel, weightsOf } from './link-validate';

/** The legacy tables as an earlier release had them (what migration 3 converts and drops). */
export const LEGACY_ROUTING_GROUPS_SQL = `
  CREATE TABLE routing_groups (id TEXT PRIMARY KEY, lane TEXT NOT NULL, name TEXT);
  CREATE TABLE routing_group_members (group_id TEXT, node_id TEXT, model TEXT, restore_after_borrow INTEGER);
`;

/** Links whose stored weights disagree with the catalog; links with an end the catalog does not know are left alone. */
export function linkWeightChanges(
  links: Pick<StoredLink, 'id' | 'owner' | 'helper' | 'weights'>[],
  catalog: ClusterEntry[],
): { id: string; weights: StoredLink['weights'] }[] {
  const out: { id: string; weights: StoredLink['weights'] }[] = [];
  for (const l of links) {
    const owner = findModel(catalog, l.owner);
    const helper = findModel(catalog, l.helper);
    if (!owner || !helper) continue;
    const weights = weightsOf(owner.record, helper.record);
    if (weights !== l.weights) out.push({ id: l.id, weights });
  }
  return out;
}

/** Recomputes stored weights from the catalog (call after the catalog updates). Returns how many links changed. */
export function refreshLinkWeights(store: LinkStore, catalog: ClusterEntry[]): number {
  const changes = linkWeightChanges(store.list(), catalog);
  return changes.length ? store.setWeights(changes) : 0;
}

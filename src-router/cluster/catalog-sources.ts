import { createHash } from 'node:crypto';
import type { ClusterModel, RecordSource } from '../contract';
import { type ClusterEntry, canonicalJson } from '../registry';
import type { Recipe } from './assets';

/**
 * The console's merged catalog with each model's source (ID-1): records of this node's config files and of other
 * nodes (the identity merge), then this node's static routes and its recipes, each marked where it came from.
 * Pure: the route passes the catalog, the routes and the recipes it holds.
 */

const hashOf = (value: unknown) => createHash('sha256').update(canonicalJson(value)).digest('hex');

/** A merged entry; a record without `source` (an older node's) is the local node's config file or a remote node's. */
export function recordModel(e: ClusterEntry, available: (localId: string) => boolean): ClusterModel {
  const replicas = e.replicas.map((r) => ({
    nodeId: r.nodeId,
    localId: r.record.localId,
    available: r.local ? available(r.record.localId) : r.available,
    source: r.record.source ?? (r.local ? 'config_file' : 'remote_node'),
  }));
  const own = replicas.find((_, i) => e.replicas[i].local) ?? replicas[0];
  return {
    id: e.id,
    baseId: e.baseId,
    capabilities: e.replicas[0].record.capabilities,
    replicas,
    configHash: e.replicas[0].record.configHash,
    modelHash: e.replicas[0].record.modelHash,
    source: own?.source,
  };
}

/** A static route (routing.static_routes): no node replica; its config hash is the hash of the route as configured. */
export function staticRouteModel(id: string, route: { engine?: string; endpoints: readonly string[] }): ClusterModel {
  return {
    id,
    baseId: id,
    capabilities: [],
    replicas: [],
    configHash: hashOf(route),
    modelHash: null,
    source: 'static_route',
  };
}

/** A recipe of this node's store: its components are the replicas; its config hash is the hash of its definition. */
export function recipeModel(recipe: Recipe, entries: readonly ClusterEntry[]): ClusterModel {
  const replicas = recipe.components.map((c) => {
    const replica = entries
      .flatMap((e) => e.replicas)
      .find((r) => r.nodeId === c.nodeId && r.record.localId === c.model);
    const source: RecordSource | undefined = replica
      ? (replica.record.source ?? (replica.local ? 'config_file' : 'remote_node'))
      : undefined;
    return {
      nodeId: c.nodeId,
      localId: c.model,
      available: replica?.available ?? false,
      ...(source ? { source } : {}),
    };
  });
  return {
    id: recipe.name,
    baseId: recipe.name,
    capabilities: [...new Set(recipe.components.map((c) => c.role))],
    replicas,
    configHash: hashOf({ components: recipe.components }),
    modelHash: null,
    source: 'recipe',
  };
}

export function sourcedCatalog(input: {
  entries: readonly ClusterEntry[];
  available(localId: string): boolean;
  staticRoutes: Readonly<Record<string, { engine?: string; endpoints: readonly string[] }>>;
  recipes: readonly Recipe[];
}): ClusterModel[] {
  return [
    ...input.entries.map((e) => recordModel(e, input.available)),
    ...Object.entries(input.staticRoutes).map(([id, r]) => staticRouteModel(id, r)),
    ...input.recipes.map((r) => recipeModel(r, input.entries)),
  ];
}

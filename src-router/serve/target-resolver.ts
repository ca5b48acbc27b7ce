import type { Supervisor } from '../backends';
import { componentReplica, type Recipe, routeRecipe } from '../cluster/assets';
import type { Endpoint } from '../engines';
import { type ClusterCatalog, type ModelRegistry, type Replica, type Target, toTarget } from '../registry';
import { canServe } from './capabilities';
import { badRequest, modelNotFound, RouterError } from './errors';

export interface ResolveInput {
  endpoint: Endpoint;
  model: string;
  /** The request body (prefix-affinity hashes its prompt). */
  body?: Record<string, unknown>;
  /** Worker requests from a master name the config by its local ID on this node. */
  byLocalId?: boolean;
  /** Nodes that just failed this request (it moves to another replica). */
  excludeNodes?: ReadonlySet<string>;
}

export interface ResolverDeps {
  nodeId: string;
  registry: ModelRegistry;
  catalog: ClusterCatalog;
  supervisor: Supervisor;
  /** Model names that mean "pick a transcription model for me" (STT-1..5). */
  sttSelectors: ReadonlySet<string>;
  /** Selector-less STT scheduling; absent where the node has nothing to choose between. */
  selectStt?(exclude: ReadonlySet<string>): Promise<Target | undefined>;
  /** Static route table (routing.static_routes): public ID → endpoints of external servers. */
  staticRoutes?: Readonly<Record<string, { engine?: string; endpoints: readonly string[] }>>;
  /** The routing strategy in force picks among candidates (ROUTE-*); without it, replicas rotate. */
  choose?(group: string, candidates: Target[], body?: Record<string, unknown>): Target | undefined;
  /** Split recipes (ASSET-4): a recipe name routes to the node owning the component for the endpoint. */
  recipes?: { get(name: string): Recipe | undefined };
}

/** Turns the model a client named into the engine or node that will serve it (ID-3, ID-4, HEALTH-3, STT). */
export class TargetResolver {
  constructor(private readonly deps: ResolverDeps) {}

  async resolve(input: ResolveInput): Promise<Target> {
    const { deps } = this;
    const exclude = input.excludeNodes ?? new Set<string>();
    if (input.byLocalId) {
      const rec = deps.registry.byLocalId(input.model);
      if (!rec) throw modelNotFound(input.model);
      if (!canServe(rec.config.capabilities, input.endpoint))
        throw cannotServe(input.model, input.endpoint, rec.config.capabilities);
      return {
        kind: 'local',
        clusterId: rec.localId,
        nodeId: deps.nodeId,
        localId: rec.localId,
        backend: rec.config.backend,
        names: [rec.localId],
        capabilities: rec.config.capabilities,
      };
    }
    if (input.endpoint === 'transcription' && deps.sttSelectors.has(input.model)) {
      const chosen = await deps.selectStt?.(exclude);
      if (!chosen)
        throw new RouterError(
          503,
          'no_transcription_model',
          'no node can take a transcription request now (no healthy node with runtime status has a transcription model)',
        );
      return chosen;
    }
    const recipe = deps.recipes?.get(input.model);
    if (recipe) return this.byRecipe(recipe, input.endpoint, exclude);
    const entry = deps.catalog.get(input.model) ?? this.byLocalName(input.model);
    const endpoints = deps.staticRoutes?.[input.model]?.endpoints;
    if (!entry && endpoints?.length) {
      const candidates = this.staticTargets(input.model, endpoints);
      if (candidates.length === 1) return candidates[0];
      return deps.choose?.(input.model, candidates, input.body) ?? candidates[0];
    }
    if (!entry) throw modelNotFound(input.model);
    const caps = entry.replicas[0].record.capabilities;
    if (!canServe(caps, input.endpoint)) throw cannotServe(input.model, input.endpoint, caps);
    const candidates = entry.replicas.filter((r) => !exclude.has(r.nodeId));
    const eligible = candidates.filter((r) => this.available(r));
    // Only local configs held after failed starts: let the lane answer, with the reason and the retry time.
    const pool = (eligible.length ? eligible : candidates.filter((r) => r.local)).map((r) => toTarget(entry.id, r));
    if (!pool.length)
      throw new RouterError(
        503,
        'model_unavailable',
        `no node serving '${entry.id}' is available now (${entry.replicas.map((r) => r.nodeId).join(', ')} unhealthy or held after failed starts)`,
      );
    if (pool.length === 1) return pool[0];
    return deps.choose?.(entry.id, pool, input.body) ?? deps.catalog.rotate(entry.id, pool)!;
  }

  /**
   * ASSET-4: the component for the endpoint's capability on a node that has that config with that backend family and
   * is available now; the public identity stays the recipe name (responses are rewritten to it).
   */
  private byRecipe(recipe: Recipe, endpoint: Endpoint, exclude: ReadonlySet<string>): Target {
    const entries = this.deps.catalog.all();
    const { component } = routeRecipe(recipe, endpoint, (c) => {
      const r = componentReplica(entries, c);
      return !!r && !exclude.has(r.nodeId) && this.available(r);
    });
    return toTarget(recipe.name, componentReplica(entries, component)!);
  }

  /**
   * GUARD-2: where a guardian answers for a request the client addressed to `clusterId` (the answer keeps that ID).
   * Its own config here, its replica in the catalog (the master knows every node), or its node's worker API at `url`
   * (a slave knows other nodes only from the settings its master pushed). Undefined when it cannot be reached now.
   */
  guardianTarget(
    ref: { nodeId: string; model: string },
    clusterId: string,
    url: string | null,
    publicId: string | null,
  ): Target | undefined {
    const names = (t: Target) => [...new Set([...t.names, ...(publicId ? [publicId] : [])])];
    if (ref.nodeId === this.deps.nodeId) {
      const rec = this.deps.registry.byLocalId(ref.model);
      if (!rec || !this.deps.supervisor.available(rec.localId)) return undefined;
      const t: Target = {
        kind: 'local',
        clusterId,
        nodeId: ref.nodeId,
        localId: rec.localId,
        backend: rec.config.backend,
        names: [rec.localId, rec.publicId],
        capabilities: rec.config.capabilities,
      };
      return { ...t, names: names(t) };
    }
    for (const entry of this.deps.catalog.all()) {
      const r = entry.replicas.find((x) => !x.local && x.nodeId === ref.nodeId && x.record.localId === ref.model);
      if (!r) continue;
      if (!r.available) return undefined;
      const t = toTarget(clusterId, r);
      return { ...t, names: names({ ...t, names: [...t.names, entry.id] }) };
    }
    if (!url) return undefined;
    const t: Target = {
      kind: 'remote',
      clusterId,
      nodeId: ref.nodeId,
      localId: ref.model,
      backend: 'unknown',
      url,
      names: [ref.model],
    };
    return { ...t, names: names(t) };
  }

  /** A static route's targets, made once per route: the hot path of a proxy. */
  private readonly statics = new Map<string, { endpoints: readonly string[]; targets: Target[] }>();
  private staticTargets(model: string, endpoints: readonly string[]): Target[] {
    const known = this.statics.get(model);
    if (known?.endpoints === endpoints) return known.targets;
    const targets = endpoints.map(
      (url): Target => ({
        kind: 'static',
        clusterId: model,
        nodeId: 'static',
        localId: model,
        backend: 'static',
        url,
        names: [model],
      }),
    );
    this.statics.set(model, { endpoints, targets });
    return targets;
  }

  private available(r: Replica): boolean {
    return r.local ? this.deps.supervisor.available(r.record.localId) : r.available;
  }

  /** A local config can also be named by its local ID. */
  private byLocalName(name: string) {
    const rec = this.deps.registry.byLocalId(name);
    if (!rec) return undefined;
    return this.deps.catalog.all().find((e) => e.replicas.some((r) => r.local && r.record.localId === rec.localId));
  }
}

const cannotServe = (model: string, endpoint: Endpoint, caps: readonly string[]) =>
  badRequest(`The model '${model}' cannot serve ${endpoint} requests (capabilities: ${caps.join(', ')})`, 'model');

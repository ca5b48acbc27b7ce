import { errorText, fetchAnswer } from '../../backends/answer-limits';
import type { ClusterEntry, Replica } from '../../registry';
import { normalizeUrl } from '../node-client';
import { type Recipe, type RecipeClusterView, type RecipeComponent, recipeLoadPlan } from './recipes';

/**
 * The cluster a recipe is checked against, from the catalog: every node with a known snapshot (healthy or not) and
 * its model configs, plus the local node even when it has none (a routing-only master).
 */
export function recipeClusterView(
  entries: readonly ClusterEntry[],
  opts: { localNodeId: string; routingOnlyMaster?: boolean; publicIds?: readonly string[] },
): RecipeClusterView {
  const nodes = new Map<string, RecipeClusterView['nodes'][number]>([
    [opts.localNodeId, { nodeId: opts.localNodeId, models: [] }],
  ]);
  for (const e of entries) {
    for (const r of e.replicas) {
      let n = nodes.get(r.nodeId);
      if (!n) nodes.set(r.nodeId, (n = { nodeId: r.nodeId, models: [] }));
      if (!n.models.some((m) => m.localId === r.record.localId))
        n.models.push({ localId: r.record.localId, backend: r.record.backend, capabilities: r.record.capabilities });
    }
  }
  return {
    nodes: [...nodes.values()],
    routingOnlyMasterId: opts.routingOnlyMaster ? opts.localNodeId : undefined,
    publicIds: opts.publicIds,
  };
}

/** The catalog replica a component names: that node's config with that local ID and backend family. */
export function componentReplica(entries: readonly ClusterEntry[], c: RecipeComponent): Replica | undefined {
  for (const e of entries) {
    const r = e.replicas.find(
      (x) => x.nodeId === c.nodeId && x.record.localId === c.model && x.record.backend === c.backend,
    );
    if (r) return r;
  }
  return undefined;
}

export interface RecipeLoadDeps {
  localNodeId: string;
  /** Loads a local config (the supervisor's preload); resolves once it is ready. */
  preloadLocal(localId: string): Promise<void>;
  /** The URL of another node of the cluster, or undefined when it is not one. */
  nodeUrl(nodeId: string): Promise<string | undefined>;
  /** Cluster token for `POST {node}/router/v1/node/load`. */
  token: string;
  /** Longest one remote load may take. */
  timeoutMs: number;
  fetchImpl?: typeof fetch;
  now?(): number;
}

export interface ComponentLoadResult extends RecipeComponent {
  status: 'loaded' | 'failed';
  error: string | null;
  durationMs: number;
}

export interface RecipeLoadResult {
  recipe: string;
  ok: boolean;
  components: ComponentLoadResult[];
}

export const NODE_LOAD_PATH = '/router/v1/node/load';

/**
 * ASSET-4 explicit loading: every node of the plan in parallel, its models one after the other (each local model
 * once); the local node through the supervisor, others through their node API. Never throws: each component says
 * what happened to it.
 */
export async function loadRecipe(recipe: Recipe, deps: RecipeLoadDeps): Promise<RecipeLoadResult> {
  const now = deps.now ?? Date.now;
  const outcomes = new Map<string, { status: 'loaded' | 'failed'; error: string | null; durationMs: number }>();
  const key = (nodeId: string, model: string) => `${nodeId}\u0000${model}`;
  await Promise.all(
    recipeLoadPlan(recipe).map(async (node) => {
      for (const load of node.loads) {
        const started = now();
        let error: string | null = null;
        try {
          if (node.nodeId === deps.localNodeId) await deps.preloadLocal(load.model);
          else await loadRemote(deps, node.nodeId, load.model);
        } catch (err) {
          error = (err as Error).message;
        }
        outcomes.set(key(node.nodeId, load.model), {
          status: error ? 'failed' : 'loaded',
          error,
          durationMs: now() - started,
        });
      }
    }),
  );
  const components = recipe.components.map((c) => ({ ...c, ...outcomes.get(key(c.nodeId, c.model))! }));
  return { recipe: recipe.name, ok: components.every((c) => c.status === 'loaded'), components };
}

async function loadRemote(deps: RecipeLoadDeps, nodeId: string, localId: string): Promise<void> {
  const url = await deps.nodeUrl(nodeId);
  if (!url) throw new Error(`no node '${nodeId}' in this cluster`);
  let res: Response;
  try {
    res = await (deps.fetchImpl ?? fetch)(`${normalizeUrl(url)}${NODE_LOAD_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${deps.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ localId }),
      signal: AbortSignal.timeout(deps.timeoutMs),
    });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    throw new Error(
      `${nodeId}: ${e.name === 'TimeoutError' ? `no answer within ${deps.timeoutMs} ms` : (e.cause?.code ?? e.message)}`,
    );
  }
  if (res.ok) return void (await res.body?.cancel());
  const text = await errorText(fetchAnswer(res));
  let message = text.slice(0, 300);
  try {
    message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
  } catch {
    /* keep the text */
  }
  throw new Error(`${nodeId} answered ${res.status}: ${message}`);
}

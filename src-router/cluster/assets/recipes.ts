import { z } from 'zod';
import { BACKEND_FAMILIES, type BackendFamily, CAPABILITIES, type Capability } from '../../config';
import type { Endpoint } from '../../engines';
import type { Db } from '../../store';
import { AssetError } from './errors';

/** One part of a split recipe: which node answers one capability, with which of its local models and backend. */
export const recipeComponentSchema = z
  .object({
    role: z.enum(CAPABILITIES).describe('the capability this component answers for the recipe'),
    nodeId: z
      .string()
      .min(1)
      .regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, dot, dash, underscore'),
    model: z.string().min(1).max(200).describe('local ID on that node'),
    backend: z.enum(BACKEND_FAMILIES),
  })
  .strict();

/** ASSET-4: a master recipe; `name` is its public model ID and stays the ID clients see whichever node answers. */
export const recipeSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(200)
      .regex(
        /^[^\s\u0000-\u001f\u007f](?:[^\u0000-\u001f\u007f]*[^\s\u0000-\u001f\u007f])?$/,
        'no control characters, no leading or trailing space',
      ),
    components: z.array(recipeComponentSchema).min(1).max(32),
  })
  .strict()
  .superRefine((r, ctx) => {
    const seen = new Map<string, number>();
    r.components.forEach((c, i) => {
      const key = `${c.role}\u0000${c.backend}`;
      const first = seen.get(key);
      if (first !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['components', i],
          message: `role '${c.role}' with backend '${c.backend}' is already components.${first}: one owner per role and backend family`,
        });
      else seen.set(key, i);
    });
  });

export type RecipeComponent = z.infer<typeof recipeComponentSchema>;
export type Recipe = z.infer<typeof recipeSchema>;

/** A recipe from any input, or `invalid_recipe` (400) naming the first bad field. */
export function parseRecipe(input: unknown): Recipe {
  const r = recipeSchema.safeParse(input);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const param = issue.path.map(String).join('.') || null;
  const message =
    issue.code === 'unrecognized_keys'
      ? `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`
      : issue.message;
  throw new AssetError('invalid_recipe', param ? `${param}: ${message}` : message, param);
}

/** What a request needs: an endpoint, or capabilities in order of preference and optionally the backend families whose HTTP shape fits. */
export type RecipeNeed = Endpoint | { capabilities: readonly Capability[]; backends?: readonly BackendFamily[] };

/** The recipe role that answers an endpoint, in order of preference. */
export const ENDPOINT_ROLES: Record<Endpoint, Capability[]> = {
  chat: ['text', 'multimodal'],
  completion: ['text', 'multimodal'],
  embedding: ['embedding', 'text'],
  image: ['image'],
  transcription: ['transcription'],
};

export interface RecipeRoute {
  component: RecipeComponent;
  /** Its place in `recipe.components`. */
  index: number;
}

/**
 * ASSET-4, pure: the component (so the node, its local model and backend) that answers `need`. Candidates are the
 * components whose role is the first needed capability that has any, then recipe order; with `isAvailable` the first
 * available one wins. `recipe_component_missing` (400) when the recipe has no such component,
 * `recipe_component_unavailable` (503) when it has some but none is available.
 */
export function routeRecipe(
  recipe: Recipe,
  need: RecipeNeed,
  isAvailable?: (c: RecipeComponent) => boolean,
): RecipeRoute {
  const { capabilities, backends } =
    typeof need === 'string' ? { capabilities: ENDPOINT_ROLES[need], backends: undefined } : need;
  const fits = (c: RecipeComponent) => !backends || backends.includes(c.backend);
  for (const role of capabilities) {
    const candidates = recipe.components
      .map((component, index) => ({ component, index }))
      .filter((r) => r.component.role === role && fits(r.component));
    if (!candidates.length) continue;
    const chosen = isAvailable ? candidates.find((r) => isAvailable(r.component)) : candidates[0];
    if (chosen) return chosen;
    const where = candidates.map((r) => `${r.component.model} on ${r.component.nodeId}`).join(', ');
    throw new AssetError(
      'recipe_component_unavailable',
      `recipe '${recipe.name}': the ${role} component (${where}) is not available now`,
      'model',
    );
  }
  const wanted = `${capabilities.join(' or ')}${backends ? ` with backend ${backends.join(' or ')}` : ''}`;
  const has = recipe.components.map((c) => `${c.role}/${c.backend}`).join(', ');
  throw new AssetError(
    'recipe_component_missing',
    `recipe '${recipe.name}' has no ${wanted} component (it has: ${has})`,
    'model',
  );
}

export interface RecipeNodeLoad {
  nodeId: string;
  loads: { model: string; backend: BackendFamily; roles: Capability[] }[];
}

/** ASSET-4, pure: what explicit loading of a recipe prepares, per node in recipe order, each local model once. */
export function recipeLoadPlan(recipe: Recipe): RecipeNodeLoad[] {
  const plan: RecipeNodeLoad[] = [];
  for (const c of recipe.components) {
    let node = plan.find((n) => n.nodeId === c.nodeId);
    if (!node) plan.push((node = { nodeId: c.nodeId, loads: [] }));
    const load = node.loads.find((l) => l.model === c.model);
    if (load) {
      if (!load.roles.includes(c.role)) load.roles.push(c.role);
    } else node.loads.push({ model: c.model, backend: c.backend, roles: [c.role] });
  }
  return plan;
}

/** The cluster as a recipe is checked against: nodes and their local model records. */
export interface RecipeClusterView {
  nodes: { nodeId: string; models: { localId: string; backend: string; capabilities: readonly string[] }[] }[];
  /** The node this check runs on when it is a routing-only master: no component may be assigned to it. */
  routingOnlyMasterId?: string;
  /** Public IDs already in the catalog (other than this recipe): a recipe name must not hide one. */
  publicIds?: readonly string[];
}

export interface RecipeProblem {
  path: string;
  message: string;
}

/** Pure: what is wrong with a recipe in this cluster (unknown node or model, backend or capability mismatch, …). */
export function checkRecipe(recipe: Recipe, view: RecipeClusterView): RecipeProblem[] {
  const problems: RecipeProblem[] = [];
  if (view.publicIds?.includes(recipe.name))
    problems.push({ path: 'name', message: `'${recipe.name}' is already a model ID in this cluster` });
  recipe.components.forEach((c, i) => {
    const path = `components.${i}`;
    if (view.routingOnlyMasterId !== undefined && c.nodeId === view.routingOnlyMasterId)
      problems.push({
        path: `${path}.nodeId`,
        message: `'${c.nodeId}' is a routing-only master: components go on other nodes`,
      });
    const node = view.nodes.find((n) => n.nodeId === c.nodeId);
    if (!node) return void problems.push({ path: `${path}.nodeId`, message: `no node '${c.nodeId}' in this cluster` });
    const model = node.models.find((m) => m.localId === c.model);
    if (!model)
      return void problems.push({ path: `${path}.model`, message: `node '${c.nodeId}' has no model '${c.model}'` });
    if (model.backend !== c.backend)
      problems.push({
        path: `${path}.backend`,
        message: `'${c.model}' on '${c.nodeId}' runs on ${model.backend}, not ${c.backend}`,
      });
    if (!model.capabilities.includes(c.role))
      problems.push({
        path: `${path}.role`,
        message: `'${c.model}' on '${c.nodeId}' has no ${c.role} capability (it has ${model.capabilities.join(', ')})`,
      });
  });
  return problems;
}

export interface StoredRecipe extends Recipe {
  updatedAt: number;
}

interface RecipeRow {
  name: string;
  definition: string;
  updated_at: number;
}

/** ASSET-1/4: recipes in the store's `recipes` table (definition = JSON `{components}`). */
export class RecipeStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  list(): StoredRecipe[] {
    return (
      this.db.prepare('SELECT name, definition, updated_at FROM recipes ORDER BY name').all() as RecipeRow[]
    ).flatMap((r) => {
      const parsed = this.fromRow(r);
      return parsed ? [parsed] : [];
    });
  }

  get(name: string): StoredRecipe | undefined {
    const row = this.db.prepare('SELECT name, definition, updated_at FROM recipes WHERE name = ?').get(name) as
      | RecipeRow
      | undefined;
    return row && this.fromRow(row);
  }

  /** `get`, or `recipe_not_found` (404). */
  require(name: string): StoredRecipe {
    const r = this.get(name);
    if (!r) throw new AssetError('recipe_not_found', `no recipe '${name}'`, 'name');
    return r;
  }

  /** Validates (`invalid_recipe`) and creates or replaces by name. */
  put(input: unknown): { recipe: StoredRecipe; created: boolean } {
    const recipe = parseRecipe(input);
    const updatedAt = this.now();
    const created = this.db.transaction(() => {
      const existed = this.db.prepare('SELECT 1 FROM recipes WHERE name = ?').get(recipe.name) !== undefined;
      this.db
        .prepare(
          'INSERT INTO recipes (name, definition, updated_at) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at',
        )
        .run(recipe.name, JSON.stringify({ components: recipe.components }), updatedAt);
      return !existed;
    })();
    return { recipe: { ...recipe, updatedAt }, created };
  }

  delete(name: string): boolean {
    return this.db.prepare('DELETE FROM recipes WHERE name = ?').run(name).changes > 0;
  }

  /** A stored row that no longer validates (edited by hand, older build) is skipped rather than routed. */
  private fromRow(row: RecipeRow): StoredRecipe | undefined {
    let definition: unknown;
    try {
      definition = JSON.parse(row.definition);
    } catch {
      return undefined;
    }
    const components =
      definition && typeof definition === 'object' && 'components' in definition ? definition.components : undefined;
    const r = recipeSchema.safeParse({ name: row.name, components });
    return r.success ? { ...r.data, updatedAt: row.updated_at } : undefined;
  }
}

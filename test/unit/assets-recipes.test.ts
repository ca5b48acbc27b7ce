import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AssetError,
  checkRecipe,
  parseRecipe,
  type Recipe,
  RecipeStore,
  recipeLoadPlan,
  routeRecipe,
} from '../../src-router/cluster/assets';
import { openStore } from '../../src-router/store';

const recipe: Recipe = {
  name: 'studio',
  components: [
    { role: 'text', nodeId: 'gpu-a', model: 'qwen-7b', backend: 'llama-server' },
    { role: 'image', nodeId: 'gpu-b', model: 'sdxl', backend: 'sd-server' },
    { role: 'transcription', nodeId: 'cpu-c', model: 'whisper-small', backend: 'whisper-server' },
    { role: 'multimodal', nodeId: 'gpu-a', model: 'qwen-7b', backend: 'llama-server' },
  ],
};

function codeOf(fn: () => unknown): { code: string; status: number; message: string; param: string | null } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AssetError);
    const e = err as AssetError;
    return { code: e.code, status: e.status, message: e.message, param: e.param };
  }
  throw new Error('expected an AssetError');
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('recipe schema (ASSET-4)', () => {
  it('accepts a recipe and returns it as is', () => {
    expect(parseRecipe(recipe)).toEqual(recipe);
  });

  it('is strict and names the bad field', () => {
    expect(codeOf(() => parseRecipe({ ...recipe, extra: 1 }))).toMatchObject({
      code: 'invalid_recipe',
      status: 400,
      message: 'unknown key "extra"',
    });
    expect(
      codeOf(() => parseRecipe({ ...recipe, components: [{ ...recipe.components[0], path: '/etc/passwd' }] })),
    ).toMatchObject({ param: 'components.0' });
    expect(
      codeOf(() => parseRecipe({ ...recipe, components: [{ ...recipe.components[0], role: 'telepathy' }] })),
    ).toMatchObject({ param: 'components.0.role' });
    expect(
      codeOf(() => parseRecipe({ ...recipe, components: [{ ...recipe.components[0], backend: 'nope' }] })),
    ).toMatchObject({ param: 'components.0.backend' });
    expect(
      codeOf(() => parseRecipe({ ...recipe, components: [{ ...recipe.components[0], nodeId: '../x' }] })),
    ).toMatchObject({ param: 'components.0.nodeId' });
    expect(
      codeOf(() => parseRecipe({ ...recipe, components: [{ ...recipe.components[0], model: '' }] })),
    ).toMatchObject({ param: 'components.0.model' });
    expect(codeOf(() => parseRecipe({ ...recipe, components: [] }))).toMatchObject({ param: 'components' });
    expect(codeOf(() => parseRecipe({ components: recipe.components }))).toMatchObject({ param: 'name' });
    for (const name of ['', ' studio', 'studio ', 'a\nb', 'x\u0000y'])
      expect(codeOf(() => parseRecipe({ ...recipe, name })).param).toBe('name');
    expect(parseRecipe({ ...recipe, name: 'org/studio:v1 beta' }).name).toBe('org/studio:v1 beta');
  });

  it('allows one owner per role and backend family', () => {
    const dup = {
      ...recipe,
      components: [...recipe.components, { role: 'text', nodeId: 'gpu-b', model: 'other', backend: 'llama-server' }],
    };
    expect(codeOf(() => parseRecipe(dup))).toMatchObject({ code: 'invalid_recipe', param: 'components.4' });
    expect(
      parseRecipe({
        ...recipe,
        components: [...recipe.components, { role: 'text', nodeId: 'gpu-b', model: 'other', backend: 'vllm' }],
      }).components,
    ).toHaveLength(5);
  });
});

describe('routeRecipe (ASSET-4)', () => {
  it('sends each endpoint to the node owning its component', () => {
    expect(routeRecipe(recipe, 'chat')).toEqual({ component: recipe.components[0], index: 0 });
    expect(routeRecipe(recipe, 'completion').component.nodeId).toBe('gpu-a');
    expect(routeRecipe(recipe, 'image').component).toMatchObject({ nodeId: 'gpu-b', model: 'sdxl' });
    expect(routeRecipe(recipe, 'transcription').component).toMatchObject({
      nodeId: 'cpu-c',
      backend: 'whisper-server',
    });
    expect(routeRecipe(recipe, { capabilities: ['multimodal'] }).index).toBe(3);
  });

  it('embedding prefers an embedding component and falls back to text', () => {
    expect(routeRecipe(recipe, 'embedding').component.role).toBe('text');
    const withEmb = parseRecipe({
      ...recipe,
      components: [...recipe.components, { role: 'embedding', nodeId: 'cpu-c', model: 'bge', backend: 'llama-server' }],
    });
    expect(routeRecipe(withEmb, 'embedding').component).toMatchObject({ nodeId: 'cpu-c', model: 'bge' });
  });

  it('honours the backend family the request shape needs', () => {
    expect(routeRecipe(recipe, { capabilities: ['image'], backends: ['sd-server', 'sim'] }).component.model).toBe(
      'sdxl',
    );
    const e = codeOf(() => routeRecipe(recipe, { capabilities: ['image'], backends: ['koboldcpp'] }));
    expect(e).toMatchObject({ code: 'recipe_component_missing', status: 400 });
    expect(e.message).toContain("recipe 'studio' has no image with backend koboldcpp component");
    expect(e.message).toContain('image/sd-server');
  });

  it('checks availability, takes the next owner in recipe order, and says which component is down', () => {
    const two = parseRecipe({
      ...recipe,
      components: [...recipe.components, { role: 'text', nodeId: 'gpu-b', model: 'mistral', backend: 'vllm' }],
    });
    expect(routeRecipe(two, 'chat', (c) => c.nodeId !== 'gpu-a').component).toMatchObject({
      nodeId: 'gpu-b',
      model: 'mistral',
    });
    const down = codeOf(() => routeRecipe(recipe, 'image', (c) => c.nodeId !== 'gpu-b'));
    expect(down).toMatchObject({ code: 'recipe_component_unavailable', status: 503 });
    expect(down.message).toContain('sdxl on gpu-b');
  });

  it('a recipe without the needed role is a clear error', () => {
    const textOnly = parseRecipe({ name: 't', components: [recipe.components[0]] });
    expect(codeOf(() => routeRecipe(textOnly, 'transcription'))).toMatchObject({
      code: 'recipe_component_missing',
      message: "recipe 't' has no transcription component (it has: text/llama-server)",
    });
  });
});

describe('recipeLoadPlan and checkRecipe (ASSET-4)', () => {
  it('plans one load per node and local model, in recipe order', () => {
    expect(recipeLoadPlan(recipe)).toEqual([
      { nodeId: 'gpu-a', loads: [{ model: 'qwen-7b', backend: 'llama-server', roles: ['text', 'multimodal'] }] },
      { nodeId: 'gpu-b', loads: [{ model: 'sdxl', backend: 'sd-server', roles: ['image'] }] },
      { nodeId: 'cpu-c', loads: [{ model: 'whisper-small', backend: 'whisper-server', roles: ['transcription'] }] },
    ]);
  });

  it('finds unknown nodes and models, backend and capability mismatches, the routing-only master and a hidden public ID', () => {
    const problems = checkRecipe(recipe, {
      routingOnlyMasterId: 'cpu-c',
      publicIds: ['studio'],
      nodes: [
        { nodeId: 'gpu-a', models: [{ localId: 'qwen-7b', backend: 'llama-server', capabilities: ['text'] }] },
        { nodeId: 'gpu-b', models: [{ localId: 'sdxl', backend: 'koboldcpp', capabilities: ['image'] }] },
      ],
    });
    expect(problems.map((p) => p.path)).toEqual([
      'name',
      'components.1.backend',
      'components.2.nodeId',
      'components.2.nodeId',
      'components.3.role',
    ]);
    expect(problems[3].message).toBe("no node 'cpu-c' in this cluster");
    expect(
      checkRecipe(parseRecipe({ name: 'ok', components: [recipe.components[0]] }), {
        nodes: [{ nodeId: 'gpu-a', models: [{ localId: 'qwen-7b', backend: 'llama-server', capabilities: ['text'] }] }],
      }),
    ).toEqual([]);
    expect(
      checkRecipe(parseRecipe({ name: 'ok', components: [recipe.components[0]] }), {
        nodes: [{ nodeId: 'gpu-a', models: [] }],
      }),
    ).toEqual([{ path: 'components.0.model', message: "node 'gpu-a' has no model 'qwen-7b'" }]);
  });
});

describe('RecipeStore (ASSET-1)', () => {
  it('creates, replaces, lists, gets, deletes, and refuses invalid recipes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'routerdesk-recipes-'));
    dirs.push(dir);
    const db = openStore(dir);
    let t = 1000;
    const store = new RecipeStore(db, () => t++);
    expect(store.put(recipe)).toEqual({ recipe: { ...recipe, updatedAt: 1000 }, created: true });
    const smaller = { name: 'studio', components: [recipe.components[1]] };
    expect(store.put(smaller)).toEqual({ recipe: { ...smaller, updatedAt: 1001 }, created: false });
    store.put({ name: 'alpha', components: [recipe.components[0]] });
    expect(store.list().map((r) => r.name)).toEqual(['alpha', 'studio']);
    expect(store.get('studio')).toEqual({ ...smaller, updatedAt: 1001 });
    expect(store.get('missing')).toBeUndefined();
    expect(codeOf(() => store.require('missing'))).toMatchObject({ code: 'recipe_not_found', status: 404 });
    expect(codeOf(() => store.put({ name: 'bad', components: [{ role: 'text' }] }))).toMatchObject({
      code: 'invalid_recipe',
    });
    expect(store.get('bad')).toBeUndefined();
    expect(store.delete('alpha')).toBe(true);
    expect(store.delete('alpha')).toBe(false);
    // A row edited by hand into something invalid is skipped, never routed.
    db.prepare('INSERT INTO recipes (name, definition, updated_at) VALUES (?, ?, ?)').run(
      'broken',
      '{"components":[{"role":"text"}]}',
      1,
    );
    db.prepare('INSERT INTO recipes (name, definition, updated_at) VALUES (?, ?, ?)').run('garbage', 'not json', 1);
    expect(store.list().map((r) => r.name)).toEqual(['studio']);
    expect(store.get('broken')).toBeUndefined();
    db.close();
  });
});

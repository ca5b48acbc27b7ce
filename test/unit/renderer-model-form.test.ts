import { describe, expect, it } from 'vitest';
import { createConsoleClient, type FetchLike } from '../../src-renderer/src/api/console-client';
import {
  backendOptions,
  configFromDraft,
  draftErrors,
  draftFromConfig,
  draftWithInspection,
  emptyDraft,
  fieldOfParam,
  linksUsing,
  nameAdvice,
  nameFromPath,
  nextSuffix,
  projectorNote,
} from '../../src-renderer/src/models/model-form';
import { engineRows } from '../../src-renderer/src/runtime/engine-rows';
import { createAppStore } from '../../src-renderer/src/store/app-store';
import type {
  ClusterModel,
  ConsoleModel,
  EngineInfo,
  LinkRecord,
  ModelFileInspection,
} from '../../src-router/contract';

const model = (publicId: string, localId: string, nodeId = 'n1') => ({ publicId, localId, nodeId }) as ConsoleModel;
const entry = (id: string, baseId: string, nodes: string[]) =>
  ({
    id,
    baseId,
    capabilities: ['text'],
    replicas: nodes.map((n) => ({ nodeId: n, localId: baseId, available: true })),
    configHash: 'c',
    modelHash: null,
  }) as ClusterModel;

describe('Add model dialog: form → config body', () => {
  it('writes the fields over the stored config and keeps what the form does not show', () => {
    const stored = {
      name: 'chat',
      backend: 'llama-server',
      model: '/m/a.gguf',
      capabilities: ['text', 'speech'],
      contextsize: 4096,
      parallel: 2,
      ttl: '5m',
      env: { A: '1' },
    };
    const draft = {
      ...draftFromConfig(stored),
      contextsize: '8192',
      parallel: '',
      capabilities: ['text', 'multimodal'],
    };
    expect(configFromDraft(draft, stored)).toEqual({
      name: 'chat',
      backend: 'llama-server',
      model: '/m/a.gguf',
      capabilities: ['text', 'multimodal', 'speech'],
      contextsize: 8192,
      ttl: '5m',
      env: { A: '1' },
    });
    expect(stored.contextsize).toBe(4096);
  });

  it('a new model: name, backend, file, capabilities; empty numbers left to the engine', () => {
    expect(configFromDraft({ ...emptyDraft(), path: ' /m/x.gguf ', name: ' x ' })).toEqual({
      name: 'x',
      backend: 'llama-node',
      model: '/m/x.gguf',
      capabilities: ['text'],
    });
  });

  it('checks what it can before sending', () => {
    expect(draftErrors(emptyDraft())).toMatchObject({ path: expect.any(String), name: expect.any(String) });
    expect(draftErrors({ ...emptyDraft(), path: '/a.gguf', name: 'a', contextsize: '12.5', parallel: '0' })).toEqual({
      contextsize: expect.any(String),
      parallel: expect.any(String),
    });
    expect(draftErrors({ ...emptyDraft(), path: '/a.gguf', name: 'a', capabilities: [] })).toEqual({
      capabilities: expect.any(String),
    });
    expect(draftErrors({ ...emptyDraft(), path: '/a.gguf', name: 'a', contextsize: '2048' })).toEqual({});
  });

  it('puts a 400 at its field', () => {
    expect(fieldOfParam('config.contextsize')).toBe('contextsize');
    expect(fieldOfParam('config.model')).toBe('path');
    expect(fieldOfParam('path')).toBe('path');
    expect(fieldOfParam('config.capabilities.1')).toBe('capabilities');
    expect(fieldOfParam('config.command')).toBe('backend');
    expect(fieldOfParam('config.ttl')).toBeNull();
    expect(fieldOfParam(null)).toBeNull();
  });

  it('names a model after its file and takes the header capabilities, keeping a name the operator typed', () => {
    expect(nameFromPath('/srv/Qwen2.5-0.5B-Instruct Q4_K_M.gguf')).toBe('qwen2.5-0.5b-instruct-q4_k_m');
    const inspection = { path: '/m/nomic-embed.gguf', capabilities: ['embedding'] } as ModelFileInspection;
    expect(draftWithInspection(emptyDraft(), inspection, '')).toMatchObject({
      path: '/m/nomic-embed.gguf',
      name: 'nomic-embed',
      capabilities: ['embedding'],
    });
    expect(draftWithInspection({ ...emptyDraft(), name: 'mine' }, inspection, '/m/old.gguf').name).toBe('mine');
    expect(draftWithInspection({ ...emptyDraft(), name: 'old' }, inspection, '/m/old.gguf').name).toBe('nomic-embed');
  });
});

describe('Add model dialog: a multimodal model needs its projector in a command', () => {
  it('says so for llama-server (naming the projector) and other engines, not with a command or without multimodal', () => {
    expect(
      projectorNote({ backend: 'llama-server', capabilities: ['text', 'multimodal'] }, '/m/mmproj.gguf', false),
    ).toContain('--mmproj /m/mmproj.gguf');
    expect(
      projectorNote({ backend: 'llama-node', capabilities: ['text', 'multimodal'] }, '/m/mmproj.gguf', false),
    ).toContain('may be refused');
    expect(
      projectorNote({ backend: 'llama-server', capabilities: ['text', 'multimodal'] }, '/m/mmproj.gguf', true),
    ).toBeNull();
    expect(projectorNote({ backend: 'llama-server', capabilities: ['text'] }, '/m/mmproj.gguf', false)).toBeNull();
  });
});

describe('Add model dialog: what a public name does', () => {
  const localModels = [model('chat', 'chat'), model('chat', 'chat-b'), model('embed', 'embed')];
  const catalog = [
    entry('chat', 'chat', ['n1']),
    entry('vision', 'vision', ['n2']),
    entry('vision-2', 'vision', ['n3']),
  ];

  it('a new name is a new public ID', () => {
    expect(nameAdvice({ name: 'fresh', localModels, catalog, nodeId: 'n1' }).kind).toBe('new');
  });
  it('a name this node serves is taken (the node refuses a second config of it from the console)', () => {
    const a = nameAdvice({ name: 'embed', localModels, catalog, nodeId: 'n1' });
    expect(a.kind).toBe('taken');
    expect(a.message).toContain('choose another name');
  });
  it('a name another node serves: a replica with the same config and weights, else the next free suffix', () => {
    const a = nameAdvice({ name: 'vision', localModels, catalog, nodeId: 'n1' });
    expect(a.kind).toBe('cluster-replica-or-suffix');
    expect(a.message).toContain('vision-3');
    expect(a.message).toContain('n2, n3');
  });
  it('editing a model and keeping its name is no collision; its other replicas are said', () => {
    expect(nameAdvice({ name: 'chat', editing: 'chat', localModels, catalog, nodeId: 'n1' })).toMatchObject({
      kind: 'same',
      message: expect.stringContaining('1 other replica'),
    });
    expect(nameAdvice({ name: 'embed', editing: 'chat', localModels, catalog, nodeId: 'n1' }).kind).toBe('taken');
  });
  it('the next suffix skips taken IDs', () => {
    expect(nextSuffix('a', ['a', 'a-2', 'a-3', 'b-4'])).toBe('a-4');
    expect(nextSuffix('a', [])).toBe('a-2');
  });
});

describe('Add model dialog: backends and links', () => {
  const engines: EngineInfo[] = [
    {
      family: 'llama-node',
      available: true,
      found_in: 'builtin',
      version: null,
      path: null,
      reason: null,
      how_to_get: null,
      binary: null,
    },
    {
      family: 'llama-server',
      available: true,
      found_in: 'path',
      version: 'b6000\nbuilt with cc',
      path: '/usr/bin/llama-server',
      reason: null,
      how_to_get: null,
      binary: 'llama-server',
    },
    {
      family: 'koboldcpp',
      available: false,
      found_in: null,
      version: null,
      path: null,
      reason: 'koboldcpp is not on PATH',
      how_to_get: 'download it from its releases',
      binary: 'koboldcpp',
    },
  ];

  it('offers the built-in engine, found ones with version and path, missing ones disabled with why and how', () => {
    const options = backendOptions(engines, 'llama-node');
    expect(options.map((o) => [o.value, o.disabled])).toEqual([
      ['llama-node', false],
      ['llama-server', false],
      ['koboldcpp', true],
    ]);
    expect(options[1].label).toBe('llama-server b6000 (/usr/bin/llama-server)');
    expect(options[2].note).toBe('koboldcpp is not on PATH — download it from its releases');
    // A stored config on a missing engine stays selectable (it is what the file says).
    expect(backendOptions(engines, 'koboldcpp').find((o) => o.value === 'koboldcpp')!.disabled).toBe(false);
    expect(backendOptions(null, 'vllm').map((o) => o.value)).toEqual(['llama-node', 'vllm']);
  });

  it('lists engines for the Runtime screen: built in, found, then missing', () => {
    expect(engineRows(engines).map((r) => [r.family, r.where])).toEqual([
      ['llama-node', 'built in'],
      ['llama-server', 'found on PATH'],
      ['koboldcpp', ''],
    ]);
  });

  it('finds the links whose owner or helper is the model on its node', () => {
    const link = (id: string, owner: [string, string], helper: [string, string]) =>
      ({
        id,
        lane: 'text',
        owner: { node_id: owner[0], model: owner[1] },
        helper: { node_id: helper[0], model: helper[1] },
      }) as LinkRecord;
    const links = [
      link('1', ['n1', 'chat'], ['n2', 'chat']),
      link('2', ['n2', 'x'], ['n1', 'chat']),
      link('3', ['n2', 'chat'], ['n3', 'chat']),
    ];
    expect(linksUsing({ nodeId: 'n1', localId: 'chat' }, links).map((l) => l.id)).toEqual(['1', '2']);
  });
});

describe('Models screen store: the models folder', () => {
  const nodeList = {
    node: { nodeId: 'n1', role: 'standalone', version: '0.1.0', startedAt: '2025-01-01T00:00:00.000Z' },
    models: [],
  };
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

  it('a token refused the folder (not an operator) is not asked again on every poll; a write re-reads folder and models', async () => {
    const calls: string[] = [];
    const answers: Record<string, Response[]> = {};
    const fetch: FetchLike = async (url, init) => {
      const path = new URL(url).pathname;
      calls.push(`${init?.method ?? 'GET'} ${path}`);
      return answers[path]?.shift() ?? json(404, { error: { message: 'none' } });
    };
    const store = createAppStore('http://n', {
      client: createConsoleClient({ url: 'http://n', token: 't', fetch }),
      now: () => 0,
    });
    answers['/router/v1/console/models'] = [json(200, nodeList), json(200, nodeList)];
    answers['/router/v1/console/model-configs'] = [
      json(403, { error: { message: 'only operators', code: 'not_an_operator' } }),
    ];
    await store.getState().refreshModels();
    expect(store.getState().modelConfigs.failure).toMatchObject({ kind: 'refused', status: 403 });
    await store.getState().refreshModels();
    expect(calls.filter((c) => c.endsWith('/model-configs'))).toHaveLength(1);

    const operator = createAppStore('http://n', {
      client: createConsoleClient({ url: 'http://n', token: 't', fetch }),
      now: () => 0,
    });
    calls.length = 0;
    const folder = { config_dir: '/m', configs: [] };
    answers['/router/v1/console/model-configs'] = [
      json(201, { name: 'x', file: '/m/x.yaml', config: { name: 'x' } }),
      json(200, folder),
    ];
    answers['/router/v1/console/models'] = [json(200, nodeList)];
    const written = await operator.getState().createModelConfig({ name: 'x' });
    expect(written.ok).toBe(true);
    expect(calls).toEqual([
      'POST /router/v1/console/model-configs',
      'GET /router/v1/console/models',
      'GET /router/v1/console/model-configs',
    ]);
    expect(operator.getState().modelConfigs.value).toEqual(folder);
  });
});

import { describe, expect, it } from 'vitest';
import { catalogRows, showsCatalog } from '../../src-renderer/src/models/catalog-view';
import type { ClusterLaneNode, ClusterModel, ConsoleModel } from '../../src-router/contract';

// The Models screen on a master (issue #12): the merged catalog with the lane state where each replica lives.

const model = (id: string, replicas: ClusterModel['replicas'], baseId = id): ClusterModel => ({
  id,
  baseId,
  capabilities: ['text'],
  replicas,
  configHash: 'c'.repeat(64),
  modelHash: null,
});
const own = (localId: string, over: Partial<ConsoleModel> = {}): ConsoleModel => ({
  publicId: localId,
  localId,
  nodeId: 'master',
  backend: 'sim',
  capabilities: ['text'],
  lane: 'text',
  state: 'failed',
  configHash: 'c',
  modelHash: null,
  contextsize: null,
  lastError: 'exit 1',
  idleUnloadMs: null,
  unloadsAt: null,
  ...over,
});
const status = (
  nodeId: string,
  models: { localId: string; loaded: boolean; loading: boolean; active?: number; queued?: number }[],
): ClusterLaneNode => ({
  nodeId,
  local: false,
  error: null,
  status: {
    nodeId,
    at: 1,
    active: 0,
    queued: 0,
    idleMs: 0,
    models: models.map((m) => ({ publicId: m.localId, capabilities: ['text'], active: 0, queued: 0, ...m })),
  },
});

describe('catalogRows', () => {
  const catalog = [
    model('m', [
      { nodeId: 'master', localId: 'm', available: false },
      { nodeId: 'gpu-b', localId: 'm-local', available: true },
    ]),
    model('m-2', [{ nodeId: 'gpu-c', localId: 'm', available: true }], 'm'),
  ];

  it('this node’s replicas take its engine state; others their node’s runtime status', () => {
    const lanes = [
      { nodeId: 'master', local: true, error: null, status: status('master', []).status },
      status('gpu-b', [{ localId: 'm-local', loaded: true, loading: false, active: 2, queued: 1 }]),
      { nodeId: 'gpu-c', local: false, status: null, error: 'http://c:1/router/v1/node/runtime-status: ECONNREFUSED' },
    ];
    const rows = catalogRows({ catalog, lanes, localModels: [own('m')], localNodeId: 'master' });
    expect(rows.map((r) => [r.id, r.suffixedFrom])).toEqual([
      ['m', null],
      ['m-2', 'm'],
    ]);
    expect(rows[0].replicas).toEqual([
      { nodeId: 'master', localId: 'm', available: false, lane: 'failed', detail: 'exit 1' },
      { nodeId: 'gpu-b', localId: 'm-local', available: true, lane: 'ready', detail: '2 active · 1 queued' },
    ]);
    expect(rows[1].replicas[0]).toMatchObject({
      lane: 'unknown',
      detail: 'http://c:1/router/v1/node/runtime-status: ECONNREFUSED',
    });
  });

  it('loading is starting, neither is stopped; unknown when not read or not reported', () => {
    const one = (lanes: ClusterLaneNode[] | null) =>
      catalogRows({
        catalog: [model('x', [{ nodeId: 'n', localId: 'x', available: true }])],
        lanes,
        localModels: null,
        localNodeId: 'master',
      })[0].replicas[0];
    expect(one([status('n', [{ localId: 'x', loaded: false, loading: true }])])).toMatchObject({ lane: 'starting' });
    expect(one([status('n', [{ localId: 'x', loaded: false, loading: false }])])).toMatchObject({
      lane: 'stopped',
      detail: '0 active · 0 queued',
    });
    expect(one(null)).toEqual({
      nodeId: 'n',
      localId: 'x',
      available: true,
      lane: 'unknown',
      detail: 'lane state not read yet',
    });
    expect(one([])).toMatchObject({ lane: 'unknown', detail: 'node n not in the lane state' });
    expect(one([status('n', [])])).toMatchObject({ lane: 'unknown', detail: 'node n does not report x' });
  });

  it('shows a `source` when the catalog record carries one, null otherwise', () => {
    const withSource: ClusterModel = { ...model('s', []), source: 'static_route' };
    const rows = catalogRows({
      catalog: [withSource, model('t', [])],
      lanes: [],
      localModels: [],
      localNodeId: 'master',
    });
    expect(rows.map((r) => r.source)).toEqual(['static route', null]);
  });

  it('a master shows the catalog (a routing-only one too); other roles their own models', () => {
    expect(showsCatalog('master')).toBe(true);
    expect(showsCatalog('standalone')).toBe(false);
    expect(showsCatalog('slave')).toBe(false);
    expect(showsCatalog(undefined)).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import type { FetchLike } from '../../src-renderer/src/api/console-client';
import { createClustersStore } from '../../src-renderer/src/store/clusters-store';
import type { ClusterView, ConsoleModelList } from '../../src-router/contract';

// The cluster switcher's store (UI-5): profiles of the local node, the selected cluster, a fresh store per switch.

const URL_ = 'http://127.0.0.1:8080';
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const view = (id: string, over: Partial<ClusterView> = {}): ClusterView => ({
  id,
  name: id === 'local' ? 'local' : `name-${id}`,
  local: id === 'local',
  url: id === 'local' ? null : 'http://10.0.0.5:8080',
  reachable: true,
  role: 'master',
  nodeId: `node-${id}`,
  version: '1',
  lastError: null,
  checkedAt: null,
  ...over,
});
const models = (nodeId: string): ConsoleModelList => ({
  node: { nodeId, role: 'master', version: '1', startedAt: '2025-01-01T00:00:00.000Z' },
  models: [],
});

/** A node that answers by path: the profiles, and each cluster's models (the proxy prefix names the cluster). */
function setup(initial?: string) {
  const calls: { method: string; path: string; body?: unknown }[] = [];
  let profiles = [view('local'), view('c1')];
  const fetch: FetchLike = async (url, init) => {
    const path = url.slice(URL_.length);
    const method = init?.method ?? 'GET';
    calls.push({ method, path, body: init?.body ? JSON.parse(String(init.body)) : undefined });
    if (path === '/router/v1/console/clusters' && method === 'GET') return json(200, { clusters: profiles });
    if (path === '/router/v1/console/clusters' && method === 'POST') {
      const body = JSON.parse(String(init?.body)) as { name: string; token: string };
      if (body.token !== 'right')
        return json(400, {
          error: {
            message: 'the router refused the token (HTTP 401)',
            type: 'invalid_request_error',
            param: 'token',
            code: 'cluster_token_refused',
          },
        });
      const added = view('c2', { name: body.name });
      profiles = [...profiles, added];
      return json(201, added);
    }
    if (path.startsWith('/router/v1/console/clusters/') && method === 'DELETE') {
      profiles = profiles.filter((p) => !path.endsWith(`/${p.id}`));
      return new Response(null, { status: 204 });
    }
    if (path === '/router/v1/console/models') return json(200, models('node-local'));
    const m = /^\/router\/v1\/console\/clusters\/([^/]+)\/console\/models$/.exec(path);
    if (m) return json(200, models(`node-${m[1]}`));
    throw new Error(`unexpected ${method} ${path}`);
  };
  const selections: string[] = [];
  const store = createClustersStore(
    { url: URL_, token: 't', fetch, now: () => 9, onSelect: (id) => selections.push(id) },
    initial,
  );
  return { store, calls, selections };
}

describe('clusters store', () => {
  it('lists the profiles from the local node, whichever cluster is selected', async () => {
    const { store, calls } = setup('c1');
    await store.getState().fetchClusters();
    expect(store.getState().list?.map((c) => c.id)).toEqual(['local', 'c1']);
    expect(calls.map((c) => c.path)).toEqual(['/router/v1/console/clusters']);
  });

  it('a switch builds a fresh store whose every call goes to the selected cluster; the old one is left as it was', async () => {
    const { store, selections } = setup();
    const first = store.getState().session;
    await first.getState().refresh();
    expect(first.getState().connection.node?.nodeId).toBe('node-local');

    store.getState().select('c1');
    const second = store.getState().session;
    expect(second).not.toBe(first);
    expect(second.getState().connection).toMatchObject({ node: null, status: 'connecting' });
    expect(second.getState().models.items).toBeNull();
    await second.getState().refresh();
    expect(second.getState().connection.node?.nodeId).toBe('node-c1');
    expect(first.getState().connection.node?.nodeId).toBe('node-local');
    expect(selections).toEqual(['c1']);

    store.getState().select('c1');
    expect(store.getState().session).toBe(second);
    expect(selections).toEqual(['c1']);
  });

  it('a selected cluster the node does not list (removed, or a stale address) falls back to the local one', async () => {
    const { store, selections } = setup('gone');
    expect(store.getState().selected).toBe('gone');
    await store.getState().fetchClusters();
    expect(store.getState().selected).toBe('local');
    expect(selections).toEqual(['local']);
  });

  it('add: the node’s refusal comes back as is (field named); a kept profile is listed', async () => {
    const { store } = setup();
    const refused = await store.getState().addCluster({ name: 'lab', url: 'http://10.0.0.5:8080', token: 'wrong' });
    expect(refused).toMatchObject({
      ok: false,
      failure: { kind: 'http', status: 400, param: 'token', code: 'cluster_token_refused' },
    });
    const added = await store.getState().addCluster({ name: 'lab', url: 'http://10.0.0.5:8080', token: 'right' });
    expect(added).toMatchObject({ ok: true, value: { id: 'c2', name: 'lab' } });
    expect(store.getState().list?.map((c) => c.id)).toEqual(['local', 'c1', 'c2']);
  });

  it('removing the selected profile selects the local cluster', async () => {
    const { store, calls } = setup('c1');
    const result = await store.getState().removeCluster('c1');
    expect(result).toEqual({ ok: true, value: null });
    expect(calls.find((c) => c.method === 'DELETE')?.path).toBe('/router/v1/console/clusters/c1');
    expect(store.getState().selected).toBe('local');
    expect(store.getState().list?.map((c) => c.id)).toEqual(['local']);
  });
});

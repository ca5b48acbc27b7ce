import { describe, expect, it } from 'vitest';
import { createConsoleClient, type FetchLike } from '../../src-renderer/src/api/console-client';
import { pickedNode, runtimeNodeOptions } from '../../src-renderer/src/runtime/node-picker';
import { createAppStore } from '../../src-renderer/src/store/app-store';
import type { ClusterNodeView, RuntimeHealth } from '../../src-router/contract';

// The Runtime screen's node picker (issue #12): which node's published blob is read.

const node = (nodeId: string, over: Partial<ClusterNodeView> = {}): ClusterNodeView => ({
  nodeId,
  url: over.local ? null : `http://${nodeId}:1`,
  role: 'slave',
  local: false,
  healthy: true,
  lastSeen: null,
  lastError: null,
  version: '1',
  settingsHash: null,
  models: 0,
  ...over,
});

describe('runtimeNodeOptions', () => {
  it('this node first (no ?node=), then every other node; unhealthy ones marked', () => {
    expect(
      runtimeNodeOptions(
        [node('m', { local: true, role: 'master' }), node('gpu-b'), node('gpu-c', { healthy: false })],
        null,
      ),
    ).toEqual([
      { value: '', label: 'm (this node)' },
      { value: 'gpu-b', label: 'gpu-b' },
      { value: 'gpu-c', label: 'gpu-c (unhealthy)' },
    ]);
  });

  it('nothing to pick on a cluster of one; a picked node no longer listed stays, marked', () => {
    expect(runtimeNodeOptions([node('s', { local: true })], null)).toBeNull();
    expect(runtimeNodeOptions(null, null)).toBeNull();
    expect(runtimeNodeOptions([node('m', { local: true })], 'gone')).toEqual([
      { value: '', label: 'm (this node)' },
      { value: 'gone', label: 'gone (not in the cluster)' },
    ]);
    expect(pickedNode('')).toBeNull();
    expect(pickedNode('gpu-b')).toBe('gpu-b');
  });
});

describe('runtime slice: picking a node', () => {
  const blob = (host: string): RuntimeHealth => ({ published: true, blob: { host } });
  const json = (body: unknown) =>
    new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });

  it('drops the previous node’s blob and reads the picked one; a late answer for the previous node is ignored', async () => {
    const calls: string[] = [];
    const pending: ((r: Response) => void)[] = [];
    const fetch: FetchLike = (url) => {
      calls.push(url.slice('http://n'.length));
      return new Promise((resolve) => pending.push(resolve));
    };
    const store = createAppStore('http://n', {
      client: createConsoleClient({ url: 'http://n', token: 't', fetch }),
      now: () => 3,
    });
    const first = store.getState().fetchRuntimeHealth();
    const picked = store.getState().pickRuntimeNode('gpu-b');
    expect(store.getState().runtimeNode).toBe('gpu-b');
    expect(calls).toEqual(['/router/v1/console/runtime.health', '/router/v1/console/runtime.health?node=gpu-b']);
    pending[1](json(blob('b-host')));
    await picked;
    pending[0](json(blob('master-host')));
    await first;
    expect(store.getState().runtime).toEqual({ health: blob('b-host'), loading: false, failure: null, fetchedAt: 3 });

    // Back to this node: nothing of gpu-b is shown while it is read.
    const back = store.getState().pickRuntimeNode(null);
    expect(store.getState().runtime.health).toBeNull();
    pending[2](json(blob('master-host')));
    await back;
    expect(store.getState().runtime.health).toEqual(blob('master-host'));
  });
});

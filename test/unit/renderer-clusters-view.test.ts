import { describe, expect, it } from 'vitest';
import {
  addClusterErrors,
  clusterOptions,
  clusterProblem,
  editClusterPatch,
} from '../../src-renderer/src/clusters/switcher-view';
import type { ClusterView } from '../../src-router/contract';

// The cluster switcher's options and dots, the unreachable state, the add dialog's field errors (UI-5).

const view = (over: Partial<ClusterView>): ClusterView => ({
  id: 'local',
  name: 'local',
  local: true,
  url: null,
  reachable: true,
  role: 'standalone',
  nodeId: 'here',
  version: '0.1.0',
  lastError: null,
  checkedAt: null,
  ...over,
});
const LOCAL = view({});
const LAB = view({ id: 'c1', name: 'lab', local: false, url: 'http://10.0.0.5:8080', role: 'master', nodeId: 'm' });
const DOWN = view({
  id: 'c2',
  name: 'far',
  local: false,
  url: 'http://10.0.0.6:8080',
  reachable: false,
  role: null,
  nodeId: null,
  version: null,
  lastError: 'could not reach http://10.0.0.6:8080: ECONNREFUSED',
});

describe('clusterOptions', () => {
  it('local first, then every profile, each with its dot and a tooltip (the last error when there is one)', () => {
    expect(clusterOptions([LOCAL, LAB, DOWN], 'c1')).toEqual([
      {
        id: 'local',
        label: 'local',
        local: true,
        selected: false,
        dot: 'ok',
        title: 'this node · standalone · here · v0.1.0',
      },
      {
        id: 'c1',
        label: 'lab',
        local: false,
        selected: true,
        dot: 'ok',
        title: 'http://10.0.0.5:8080 · master · m · v0.1.0',
      },
      {
        id: 'c2',
        label: 'far',
        local: false,
        selected: false,
        dot: 'bad',
        title: 'could not reach http://10.0.0.6:8080: ECONNREFUSED',
      },
    ]);
  });

  it('a selected cluster not listed yet (the address named it) is kept, dot unknown', () => {
    expect(clusterOptions(null, 'c1')).toEqual([
      { id: 'c1', label: 'c1', local: false, selected: true, dot: 'unknown', title: 'not read yet' },
    ]);
  });
});

describe('clusterProblem', () => {
  const proxy = {
    kind: 'unreachable' as const,
    status: 502,
    message: "cluster 'lab' (http://10.0.0.5:8080) could not be reached: ECONNREFUSED",
    code: 'cluster_unreachable',
  };

  it('the local cluster has none', () => {
    expect(clusterProblem([LOCAL], 'local', proxy)).toBeNull();
  });

  it('the proxy’s answer naming the cluster, else the switcher’s last probe', () => {
    expect(clusterProblem([LOCAL, LAB], 'c1', proxy)).toBe(proxy.message);
    expect(clusterProblem([LOCAL, DOWN], 'c2', null)).toBe(
      "cluster 'far' cannot be reached: could not reach http://10.0.0.6:8080: ECONNREFUSED",
    );
    expect(clusterProblem([LOCAL, LAB], 'c1', null)).toBeNull();
    expect(
      clusterProblem([LOCAL, LAB], 'c1', {
        kind: 'unreachable',
        status: null,
        message: 'node unreachable: fetch failed',
      }),
    ).toBeNull();
  });
});

describe('addClusterErrors', () => {
  it('a refusal naming url or token shows at that field; one naming none above the buttons', () => {
    expect(addClusterErrors(null)).toEqual({ fields: {}, form: null });
    expect(
      addClusterErrors({ kind: 'http', status: 400, message: 'the router refused the token', param: 'token' }),
    ).toEqual({ fields: { token: 'the router refused the token' }, form: null });
    expect(addClusterErrors({ kind: 'http', status: 400, message: 'could not reach', param: 'url' }).fields).toEqual({
      url: 'could not reach',
    });
    expect(addClusterErrors({ kind: 'http', status: 409, message: 'exists', param: 'name' }).fields).toEqual({
      name: 'exists',
    });
    expect(addClusterErrors({ kind: 'refused', status: 403, message: 'only operators', param: null })).toEqual({
      fields: {},
      form: 'only operators',
    });
  });
});

describe('editClusterPatch (issue #26 item 6)', () => {
  const current = { name: 'lab', url: 'http://10.0.0.5:8080' };
  it('a new URL without the token is refused at the token field and sends nothing', () => {
    const r = editClusterPatch(current, { name: 'lab', url: 'http://10.0.0.9:8080', token: '' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.fields.token).toMatch(/new URL needs the token again/);
  });
  it('sends only what changed: a new URL with its token, a rename alone, nothing at all', () => {
    expect(editClusterPatch(current, { name: 'lab', url: ' http://10.0.0.9:8080 ', token: 't' })).toEqual({
      ok: true,
      patch: { url: 'http://10.0.0.9:8080', token: 't' },
    });
    expect(editClusterPatch(current, { name: 'lab-2', url: current.url, token: '' })).toEqual({
      ok: true,
      patch: { name: 'lab-2' },
    });
    expect(editClusterPatch(current, { name: 'lab', url: current.url, token: 'new' })).toEqual({
      ok: true,
      patch: { token: 'new' },
    });
    expect(editClusterPatch(current, { name: 'lab', url: current.url, token: '' })).toEqual({ ok: true, patch: null });
  });
});

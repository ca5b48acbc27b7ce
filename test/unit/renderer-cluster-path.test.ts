import { describe, expect, it } from 'vitest';
import {
  CLUSTER_PARAM,
  clusterFromHref,
  clusterPath,
  hrefWithCluster,
  LOCAL_CLUSTER,
} from '../../src-renderer/src/api/cluster-path';
import { createConsoleClient, type FetchLike } from '../../src-renderer/src/api/console-client';
import { clusterApiPrefix } from '../../src-router/contract';

// The console client of a remote cluster (UI-5): the same calls, mapped through the local node's proxy.

const URL_ = 'http://127.0.0.1:8080';
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('clusterPath', () => {
  it('leaves the local cluster’s paths as they are', () => {
    for (const c of [null, undefined, '', LOCAL_CLUSTER]) {
      expect(clusterPath(c, '/router/v1/console/models')).toBe('/router/v1/console/models');
      expect(clusterPath(c, '/router/v1/site/guardians')).toBe('/router/v1/site/guardians');
    }
  });

  it('maps console and site paths of a profile through the proxy, query kept', () => {
    expect(clusterPath('c1', '/router/v1/console/runtime.health?node=gpu-b')).toBe(
      `${clusterApiPrefix('c1')}/console/runtime.health?node=gpu-b`,
    );
    expect(clusterPath('c1', '/router/v1/site/text-routing-groups/7')).toBe(
      '/router/v1/console/clusters/c1/site/text-routing-groups/7',
    );
    expect(clusterPath('a b', '/router/v1/console/cluster/models')).toBe(
      '/router/v1/console/clusters/a%20b/console/cluster/models',
    );
  });

  it('leaves any other path alone', () => {
    expect(clusterPath('c1', '/health')).toBe('/health');
  });
});

describe('the cluster in the address', () => {
  it('reads ?cluster=, the local cluster without one', () => {
    expect(clusterFromHref('http://h:1/#models')).toBe(LOCAL_CLUSTER);
    expect(clusterFromHref(`http://h:1/?${CLUSTER_PARAM}=c1#links`)).toBe('c1');
    expect(clusterFromHref('http://h:1/?cluster=#links')).toBe(LOCAL_CLUSTER);
  });

  it('writes it, keeping the screen; the local cluster drops the parameter', () => {
    expect(hrefWithCluster('http://h:1/#runtime', 'c1')).toBe('/?cluster=c1#runtime');
    expect(hrefWithCluster('http://h:1/?cluster=c1&x=1#nodes', LOCAL_CLUSTER)).toBe('/?x=1#nodes');
  });
});

describe('console client for a remote cluster', () => {
  function client(cluster: string | null, answer: () => Response | Error) {
    const calls: { url: string; init?: RequestInit }[] = [];
    const fetch: FetchLike = async (url, init) => {
      calls.push({ url, init });
      const a = answer();
      if (a instanceof Error) throw a;
      return a;
    };
    return { c: createConsoleClient({ url: URL_, token: 'local-token', fetch, cluster }), calls };
  }

  it('sends every call, reads and writes, through the proxy with the local console token', async () => {
    const { c, calls } = client('c1', () => json(200, { links: [], version: 0 }));
    await c.links('text');
    await c.runtimeHealth('gpu-b');
    await c.setRouting({ strategy: 'random' });
    await c.exportDecisions('csv', 'kind=plan');
    expect(calls.map((x) => `${x.init?.method} ${x.url.slice(URL_.length)}`)).toEqual([
      'GET /router/v1/console/clusters/c1/site/text-routing-groups',
      'GET /router/v1/console/clusters/c1/console/runtime.health?node=gpu-b',
      'POST /router/v1/console/clusters/c1/console/runtime.setRouting',
      'GET /router/v1/console/clusters/c1/console/decisions/export?kind=plan&format=csv',
    ]);
    expect(calls.every((x) => new Headers(x.init?.headers).get('authorization') === 'Bearer local-token')).toBe(true);
  });

  it('the local cluster calls the node’s own paths', async () => {
    const { c, calls } = client(LOCAL_CLUSTER, () => json(200, { nodes: [] }));
    await c.clusterLanes();
    expect(calls.map((x) => x.url)).toEqual([`${URL_}/router/v1/console/cluster/lanes`]);
  });

  it('the proxy’s 502/504 naming the cluster is `unreachable` with its message (reads and writes)', async () => {
    const message = "cluster 'lab' (http://10.0.0.5:8080) could not be reached: ECONNREFUSED";
    const { c } = client('c1', () =>
      json(502, { error: { message, type: 'server_error', code: 'cluster_unreachable' } }),
    );
    expect(await c.listModels()).toEqual({
      ok: false,
      failure: { kind: 'unreachable', status: 502, message, code: 'cluster_unreachable' },
    });
    expect(
      await c.createLink('text', {
        owner: { node_id: 'a', model: 'm' },
        helper: { node_id: 'b', model: 'n' },
      } as never),
    ).toMatchObject({ ok: false, failure: { kind: 'unreachable', message } });
    const slow = client('c1', () =>
      json(504, { error: { message: "cluster 'lab' did not answer within 15 s", code: 'cluster_timeout' } }),
    );
    expect(await slow.c.lending()).toMatchObject({
      ok: false,
      failure: { kind: 'unreachable', status: 504, code: 'cluster_timeout' },
    });
  });

  it('a 502 of the remote itself (not the proxy) stays an HTTP failure', async () => {
    const { c } = client('c1', () => json(502, { error: { message: 'engine crashed', code: 'engine_failed' } }));
    expect(await c.listModels()).toMatchObject({ ok: false, failure: { kind: 'http', status: 502 } });
  });
});
